/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * Reading a report like schema/parse.py: size, UTF-8, NaN/Infinity, depth, duplicate keys, JSON, version.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var pyRepr = QJ.pyRepr;

  function Ctx(rules, ints) { this.rules = rules; this.ints = ints || {}; }
  /* Was the number at JSON pointer `path` an integer literal (Python int)? */
  Ctx.prototype.isInt = function (path) { return this.ints[path] === true; };

  function problem(rules, code, path, message) {
    var c = rules.codes[code];
    return { code: code, severity: c.severity, path: path, message: message.split(/\s+/).join(' ').trim(), hint: c.hint };
  }
  function pointer(parts) {
    return parts.map(function (p) { return '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1'); }).join('');
  }
  function lineCol(text, index) {
    var before = text.slice(0, index);
    var line = before.split('\n').length;
    return [line, index - (before.lastIndexOf('\n') + 1) + 1];
  }

  /* A strict JSON reader that also reports duplicate keys, which numbers were integer literals, and the
   * digit count of integer literals a double cannot hold exactly (Python reads those exactly). */
  function readJson(text) {
    var i = 0;
    var ints = {};
    var bigInts = {};
    var duplicates = [];
    function fail(msg) { var lc = lineCol(text, i); throw { json: true, message: msg + ' at line ' + lc[0] + ' column ' + lc[1] }; }
    function ws() { while (i < text.length && ' \t\n\r'.indexOf(text[i]) !== -1) { i++; } }
    function str() {
      var start = i;
      i++;
      var out = '';
      while (true) {
        if (i >= text.length) { i = start; fail('Unterminated string starting'); }
        var ch = text[i];
        if (ch === '"') { i++; return out; }
        if (ch === '\\') {
          var esc = text[i + 1];
          var map = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
          if (esc === 'u') {
            var hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) { fail('Invalid \\uXXXX escape'); }
            out += String.fromCharCode(parseInt(hex, 16));
            i += 6;
          } else if (Object.prototype.hasOwnProperty.call(map, esc)) { out += map[esc]; i += 2; } else { fail('Invalid \\escape'); }
        } else if (ch < ' ') { fail('Invalid control character'); } else { out += ch; i++; }
      }
    }
    function value(path) {
      ws();
      var ch = text[i];
      if (ch === '{') {
        i++;
        var obj = {};
        var seen = {};
        ws();
        if (text[i] === '}') { i++; return obj; }
        while (true) {
          ws();
          if (text[i] !== '"') { fail('Expecting property name enclosed in double quotes'); }
          var key = str();
          ws();
          if (text[i] !== ':') { fail("Expecting ':' delimiter"); }
          i++;
          if (Object.prototype.hasOwnProperty.call(seen, key)) { duplicates.push(pointer(path.concat([key]))); }
          seen[key] = true;
          var v = value(path.concat([key]));
          Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
          ws();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === '}') { i++; return obj; }
          fail("Expecting ',' delimiter");
        }
      }
      if (ch === '[') {
        i++;
        var arr = [];
        ws();
        if (text[i] === ']') { i++; return arr; }
        while (true) {
          arr.push(value(path.concat([arr.length])));
          ws();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === ']') { i++; return arr; }
          fail("Expecting ',' delimiter");
        }
      }
      if (ch === '"') { return str(); }
      var m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 10000));
      if (m && m[0]) {
        // Python refuses integer literals longer than its int-conversion limit (4,300 digits).
        if (!m[1] && !m[2] && m[0].replace('-', '').length > 4300) { fail('Exceeds the limit for integer string conversion'); }
        i += m[0].length;
        if (!m[1] && !m[2]) {
          ints[pointer(path)] = true;
          if (!Number.isSafeInteger(Number(m[0]))) { bigInts[pointer(path)] = m[0].replace('-', '').length; }
        }
        return Number(m[0]);
      }
      if (text.slice(i, i + 4) === 'true') { i += 4; return true; }
      if (text.slice(i, i + 5) === 'false') { i += 5; return false; }
      if (text.slice(i, i + 4) === 'null') { i += 4; return null; }
      fail('Expecting value');
    }
    var doc = value([]);
    ws();
    if (i < text.length) { fail('Extra data'); }
    return { doc: doc, ints: ints, bigInts: bigInts, duplicates: duplicates };
  }

  var LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  function loneSurrogate(s) {
    var m = LONE_SURROGATE.exec(s);
    if (!m) { return null; }
    var ch = m[0].length === 2 && !/[\uD800-\uDBFF]/.test(m[0][0]) ? m[0][1] : m[0][0];
    return ch.charCodeAt(0);
  }
  /* schema.parse.unsafe_values: a \u escape decoding to an unpaired surrogate (QJ003), else each number
   * beyond +/-(2^53 - 1) or subnormal (QJ012), sorted by path, at most max_listed. */
  function unsafeValues(rules, doc, bigInts) {
    var surrogates = [];
    var numbers = [];
    var stack = [[doc, []]];
    while (stack.length) {
      var item = stack.pop();
      var node = item[0];
      var where = item[1];
      if (typeof node === 'string') {
        if (loneSurrogate(node) !== null) { surrogates.push([pointer(where), node]); }
      } else if (Array.isArray(node)) {
        node.forEach(function (v, k) { stack.push([v, where.concat([k])]); });
      } else if (node !== null && typeof node === 'object') {
        Object.keys(node).forEach(function (k) {
          if (loneSurrogate(k) !== null) { surrogates.push([pointer(where.concat([k])), k]); }
          stack.push([node[k], where.concat([k])]);
        });
      } else if (typeof node === 'number') {
        var path = pointer(where);
        var label = path || 'the value';
        if (Object.prototype.hasOwnProperty.call(bigInts, path)) {
          var digits = bigInts[path];
          var size = digits <= 60 ? 'an integer of ' + digits + ' digits' : 'an integer of more than 60 digits';
          numbers.push(problem(rules, 'QJ012', path, label + ' is ' + size + ', beyond +/-' + rules.max_safe_integer.toLocaleString('en-US') + ' (2^53 - 1), the largest a browser reads exactly'));
        } else if (node !== 0 && Math.abs(node) < rules.smallest_normal) {
          numbers.push(problem(rules, 'QJ012', path, label + ' is ' + String(node) + ', a subnormal number below ' + String(rules.smallest_normal)));
        }
      }
    }
    if (surrogates.length) {
      surrogates.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
      var code = loneSurrogate(surrogates[0][1]).toString(16).toUpperCase();
      return [problem(rules, 'QJ003', '', 'a \\u escape decodes to an unpaired surrogate (U+' + code + ') at ' + (surrogates[0][0] || 'the top level') + '; such text is not UTF-8')];
    }
    numbers.sort(function (a, b) { return a.path < b.path ? -1 : a.path > b.path ? 1 : 0; });
    if (numbers.length > rules.max_listed) {
      var rest = numbers.length - rules.max_listed + 1;
      var last = numbers[rules.max_listed - 1];
      numbers = numbers.slice(0, rules.max_listed - 1).concat([problem(rules, 'QJ012', last.path, last.message + '; and ' + (rest - 1) + ' more such numbers')]);
    }
    return numbers;
  }

  function scan(rules, text) {
    var re = /"(?:[^"\\]|\\[\s\S])*"?|[\[{]|[\]}]|NaN|Infinity/g;
    var depth = 0;
    var m;
    while ((m = re.exec(text)) !== null) {
      var t = m[0];
      if (t === '[' || t === '{') {
        depth += 1;
        if (depth > rules.max_depth) {
          var lc = lineCol(text, m.index);
          return problem(rules, 'QJ007', '', 'nesting deeper than ' + rules.max_depth + ' levels at line ' + lc[0] + ' column ' + lc[1]);
        }
      } else if (t === ']' || t === '}') {
        depth -= 1;
      } else if (t === 'NaN' || t === 'Infinity') {
        var lc2 = lineCol(text, m.index);
        return problem(rules, 'QJ004', '', t + ' literal at line ' + lc2[0] + ' column ' + lc2[1]);
      }
    }
    return null;
  }

  function versionProblems(rules, report) {
    if (!Object.prototype.hasOwnProperty.call(report, 'schema_version')) {
      return [problem(rules, 'QJ009', '/schema_version', 'schema_version is missing')];
    }
    var v = report.schema_version;
    if (typeof v !== 'string') {
      return [problem(rules, 'QJ009', '/schema_version', 'schema_version is not a string')];
    }
    if (rules.known_versions.indexOf(v) === -1) {
      var shown = [...v].length <= 60 ? v : [...v].slice(0, 57).join('') + '...';
      return [problem(rules, 'QJ010', '/schema_version', 'schema_version ' + pyRepr(shown) + ' is not one this tool reads')];
    }
    return [];
  }

  /* parse_report(data): data is a string, or a Uint8Array of a file's bytes. */
  function parseReport(rules, data) {
    var text;
    if (typeof data === 'string') {
      if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(data)) {
        return { report: null, ctx: null, problems: [problem(rules, 'QJ003', '', 'text contains an unpaired surrogate')] };
      }
      data = new TextEncoder().encode(data);
    }
    if (data.length > rules.max_report_bytes) {
      return { report: null, ctx: null, problems: [problem(rules, 'QJ002', '', 'report is ' + data.length.toLocaleString('en-US') + ' bytes; the limit is ' + rules.max_report_bytes.toLocaleString('en-US'))] };
    }
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data);
    } catch (e) {
      return { report: null, ctx: null, problems: [problem(rules, 'QJ003', '', 'the bytes are not valid UTF-8')] };
    }
    if (text.charCodeAt(0) === 0xFEFF) { text = text.slice(1); }
    if (!text.trim()) { return { report: null, ctx: null, problems: [problem(rules, 'QJ001', '', 'the report is empty')] }; }
    var failure = scan(rules, text);
    if (failure) { return { report: null, ctx: null, problems: [failure] }; }
    var parsed;
    try {
      parsed = readJson(text);
    } catch (e) {
      if (e && e.json) { return { report: null, ctx: null, problems: [problem(rules, 'QJ005', '', e.message)] }; }
      throw e;
    }
    var doc = parsed.doc;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      var kind = Array.isArray(doc) ? 'an array' : typeof doc === 'string' ? 'a string' : typeof doc === 'boolean' ? 'a boolean' : doc === null ? 'null' : 'a number';
      return { report: null, ctx: null, problems: [problem(rules, 'QJ008', '', 'the top level is ' + kind + ', not an object')] };
    }
    if (parsed.duplicates.length) {
      var uniq = Array.from(new Set(parsed.duplicates)).sort();
      return {
        report: null, ctx: null,
        problems: uniq.map(function (p) {
          var cut = p.lastIndexOf('/');
          return problem(rules, 'QJ006', p, 'key ' + pyRepr(p.slice(cut + 1)) + ' appears more than once in ' + (p.slice(0, cut) || 'the top-level object'));
        })
      };
    }
    var unsafe = unsafeValues(rules, doc, parsed.bigInts);
    if (unsafe.length) { return { report: null, ctx: null, problems: unsafe }; }
    var found = versionProblems(rules, doc);
    return { report: found.length ? null : doc, ctx: new Ctx(rules, parsed.ints), problems: found };
  }

  QJ.Ctx = Ctx;
  QJ.lineCol = lineCol;
  QJ.parseReport = parseReport;
  QJ.pointer = pointer;
  QJ.problem = problem;
  QJ.readJson = readJson;
  QJ.scan = scan;
  QJ.unsafeValues = unsafeValues;
  QJ.versionProblems = versionProblems;
}(typeof window !== 'undefined' ? window : globalThis));
