// Runs the site's checker (gallery/static/qj*.js, loaded in order as the page does) under node on many
// report texts: the bulk half of the JS-vs-Python test.
// Input (a JSON file path in argv[2]): {"rules": ..., "curves": ..., "texts": [...]}; output: JSON on stdout.
// Required as a module instead, it returns the checker namespace.
'use strict';
const fs = require('fs');
const path = require('path');
const folder = path.join(__dirname, '..', '..', 'gallery', 'static');
fs.readdirSync(folder).filter((name) => /^qj\d-.*\.js$/.test(name)).sort()
  .forEach((name) => require(path.join(folder, name)));
const QJ = globalThis.QJ;
if (require.main === module) {
  const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const out = input.texts.map((text) => {
    const result = QJ.checkText(input.rules, input.curves, text);
    return { ok: result.ok, problems: result.problems, verdict: result.verdict };
  });
  process.stdout.write(JSON.stringify(out));
} else {
  module.exports = QJ;
}
