// Runs gallery/static/check.js under node on many report texts: the bulk half of the JS-vs-Python test.
// Input (a JSON file path in argv[2]): {"rules": ..., "curves": ..., "texts": [...]}; output: JSON on stdout.
'use strict';
const fs = require('fs');
const path = require('path');
const check = require(path.join(__dirname, '..', '..', 'gallery', 'static', 'check.js'));
const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = input.texts.map((text) => {
  const result = check.checkText(input.rules, input.curves, text);
  return { ok: result.ok, problems: result.problems, verdict: result.verdict };
});
process.stdout.write(JSON.stringify(out));
