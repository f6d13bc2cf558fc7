/* quantjoule in the browser: a port of schema.parse_report + schema.validate + curves.grade, and the
 * check-your-energy.json panel. The numbers it needs (JSON Schemas, problem codes, limits, known models,
 * curves) are generated from the Python packages into data/rules.js and data/curves.js, so the page grades
 * with the same rule and the same numbers as the bot. Runs in the page and under node (for the tests);
 * nothing here talks to a network. Each function names the Python function it mirrors. */
(function (root) {
  'use strict';

  // ---------------------------------------------------------------- numbers as Python prints them
  function isNum(v) { return typeof v === 'number'; }
  /* Python round(x, d): correctly rounded, ties (only exact binary halves) to even. */
  function pyRound(x, d) {
    if (!isFinite(x)) { return x; }
    var t = x * Math.pow(2, d + 1);
    if (Number.isInteger(t) && t % 2 !== 0) {
      var n = x * Math.pow(10, d);
      var f = Math.floor(n);
      var even = (f % 2 === 0) ? f : f + 1;
      return even / Math.pow(10, d);
    }
    var r = Number(x.toFixed(d));
    return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r;
  }
  /* format(x, '+.Nf') / '.Nf' */
  function pyFixed(x, d, sign) {
    var negative = x < 0 || Object.is(x, -0);
    var s = Math.abs(pyRound(x, d)).toFixed(d);
    if (negative) { return '-' + s; }
    return (sign ? '+' : '') + s;
  }
  /* repr() of the scalars that appear in messages. */
  function pyRepr(v) {
    if (v === null || v === undefined) { return 'None'; }
    if (v === true) { return 'True'; }
    if (v === false) { return 'False'; }
    if (typeof v === 'string') {
      var q = (v.indexOf("'") !== -1 && v.indexOf('"') === -1) ? '"' : "'";
      var body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
      if (q === "'") { body = body.replace(/'/g, "\\'"); }
      return q + body + q;
    }
    if (typeof v === 'number') { return pyG(v); }
    return String(v);
  }
  /* format(x, 'g') for messages (6 significant digits). */
  function pyG(x, digits) {
    var p = digits || 6;
    if (x === 0) { return Object.is(x, -0) ? '-0' : '0'; }
    if (!isFinite(x)) { return x > 0 ? 'inf' : (x < 0 ? '-inf' : 'nan'); }
    var exp = Math.floor(Math.log10(Math.abs(x)));
    var s = Number(x.toPrecision(p));
    exp = Math.floor(Math.log10(Math.abs(s)));
    if (exp < -4 || exp >= p) {
      var m = s.toExponential(p - 1).replace(/\.?0+e/, 'e');
      return m.replace(/e([+-])(\d)$/, 'e$10$2');
    }
    return String(s);
  }
  /* math.fsum: exactly rounded sum (Shewchuk partials with Python's final half-way correction). */
  function fsum(values) {
    var partials = [];
    values.forEach(function (x) {
      var i = 0;
      for (var j = 0; j < partials.length; j++) {
        var y = partials[j];
        if (Math.abs(x) < Math.abs(y)) { var tmp = x; x = y; y = tmp; }
        var hi = x + y;
        var lo = y - (hi - x);
        if (lo) { partials[i++] = lo; }
        x = hi;
      }
      partials.length = i;
      partials.push(x);
    });
    var n = partials.length;
    if (!n) { return 0; }
    var hiSum = partials[--n];
    var loSum = 0;
    while (n > 0) {
      var xx = hiSum;
      var yy = partials[--n];
      hiSum = xx + yy;
      var yr = hiSum - xx;
      loSum = yy - yr;
      if (loSum) { break; }
    }
    if (n > 0 && ((loSum < 0 && partials[n - 1] < 0) || (loSum > 0 && partials[n - 1] > 0))) {
      var y2 = loSum * 2;
      var x2 = hiSum + y2;
      if (y2 === x2 - hiSum) { hiSum = x2; }
    }
    return hiSum;
  }
  /* Python's sum(): left to right, starting from integer 0. */
  function pySum(values) { var s = 0; values.forEach(function (v) { s += v; }); return s; }

  // ---------------------------------------------------------------- reading (schema/parse.py)
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

  /* A strict JSON reader that also reports duplicate keys and which numbers were integer literals. */
  function readJson(text) {
    var i = 0;
    var ints = {};
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
        if (!m[1] && !m[2]) { ints[pointer(path)] = true; }
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
    return { doc: doc, ints: ints, duplicates: duplicates };
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
    var found = versionProblems(rules, doc);
    return { report: found.length ? null : doc, ctx: new Ctx(rules, parsed.ints), problems: found };
  }

  // ---------------------------------------------------------------- JSON Schema (schema/structure.py)
  var KEYWORD_CODES = {
    required: 'QJ101', type: 'QJ102', enum: 'QJ103', const: 'QJ104', minimum: 'QJ105', maximum: 'QJ105',
    exclusiveMinimum: 'QJ105', exclusiveMaximum: 'QJ105', additionalProperties: 'QJ106', propertyNames: 'QJ106',
    pattern: 'QJ107', minLength: 'QJ107', maxLength: 'QJ107', minItems: 'QJ108', maxItems: 'QJ108',
    uniqueItems: 'QJ108'
  };
  function jsType(v) {
    if (v === null) { return 'null'; }
    if (Array.isArray(v)) { return 'array'; }
    return typeof v;
  }
  function isType(v, t) {
    switch (t) {
      case 'object': return jsType(v) === 'object';
      case 'array': return Array.isArray(v);
      case 'string': return typeof v === 'string';
      case 'number': return typeof v === 'number';
      case 'integer': return typeof v === 'number' && Number.isInteger(v);
      case 'boolean': return typeof v === 'boolean';
      case 'null': return v === null;
      default: return false;
    }
  }
  /* jsonschema's equality: booleans are not numbers, 1 equals 1.0, containers compare deeply. */
  function jsEqual(a, b) {
    if (typeof a === 'boolean' || typeof b === 'boolean') { return a === b; }
    if (Array.isArray(a) || Array.isArray(b)) {
      return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every(function (x, k) { return jsEqual(x, b[k]); });
    }
    if (jsType(a) === 'object' || jsType(b) === 'object') {
      if (jsType(a) !== 'object' || jsType(b) !== 'object') { return false; }
      var ka = Object.keys(a).sort();
      var kb = Object.keys(b).sort();
      return jsEqual(ka, kb) && ka.every(function (k) { return jsEqual(a[k], b[k]); });
    }
    return a === b;
  }
  function short(v) {
    var t;
    try { t = JSON.stringify(v); } catch (e) { t = String(v); }
    if (t === undefined) { t = String(v); }
    return [...t].length <= 60 ? t : [...t].slice(0, 57).join('') + '...';
  }
  function describeType(v, ctx, path) {
    if (v === null) { return 'null'; }
    if (typeof v === 'boolean') { return 'a boolean'; }
    if (typeof v === 'number') { return ctx.isInt(path) ? 'an integer' : 'a number'; }
    if (typeof v === 'string') { return 'a string'; }
    if (Array.isArray(v)) { return 'an array'; }
    return 'an object';
  }

  /* Python's re.search: a final `$` also matches before one trailing newline. */
  function pyRegex(pattern) {
    var source = /(^|[^\\])\$$/.test(pattern) ? pattern.slice(0, -1) + '(?=\n?$)' : pattern;
    return new RegExp(source, 'u');
  }
  function SchemaRun(rules, ctx, schemaRoot) { this.rules = rules; this.ctx = ctx; this.root = schemaRoot; }
  SchemaRun.prototype.resolve = function (ref) {
    var node = this.root;
    ref.replace(/^#\//, '').split('/').forEach(function (part) { node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')]; });
    return node;
  };
  SchemaRun.prototype.valid = function (schema, v, parts) { return this.errors(schema, v, parts, true).length === 0; };
  /* Errors of `v` against `schema`, as Problems (the mapping of structure._problems_of). */
  SchemaRun.prototype.errors = function (schema, v, parts, quick) {
    var self = this;
    var rules = this.rules;
    var out = [];
    if (schema === true) { return out; }
    if (schema === false) { out.push(problem(rules, 'QJ109', pointer(parts), pointer(parts) + ' is not allowed')); return out; }
    var where = pointer(parts) || 'the report';
    var add = function (code, path, message) { out.push(problem(rules, code, path, message)); };
    Object.keys(schema).forEach(function (kw) {
      if (quick && out.length) { return; }
      var b = schema[kw];
      switch (kw) {
        case '$ref': out.push.apply(out, self.errors(self.resolve(b), v, parts, quick)); break;
        case 'allOf': b.forEach(function (s) { out.push.apply(out, self.errors(s, v, parts, quick)); }); break;
        case 'oneOf': {
          var ok = b.filter(function (s) { return self.valid(s, v, parts); }).length;
          if (ok === 0) { add('QJ109', pointer(parts), where + ' matches none of the allowed shapes'); } else if (ok > 1) { add('QJ109', pointer(parts), where + ' matches more than one allowed shape'); }
          break;
        }
        case 'if': {
          var branch = self.valid(b, v, parts) ? schema.then : schema.else;
          if (branch !== undefined) { out.push.apply(out, self.errors(branch, v, parts, quick)); }
          break;
        }
        case 'type': {
          var wanted = Array.isArray(b) ? b : [b];
          if (!wanted.some(function (t) { return isType(v, t); })) {
            add('QJ102', pointer(parts), where + ' is ' + describeType(v, self.ctx, pointer(parts)) + '; expected ' + wanted.join(' or '));
          }
          break;
        }
        case 'enum':
          if (!b.some(function (x) { return jsEqual(x, v); })) { add('QJ103', pointer(parts), where + ' is ' + short(v) + '; allowed: ' + b.map(short).join(', ')); }
          break;
        case 'const':
          if (!jsEqual(b, v)) { add('QJ104', pointer(parts), where + ' is ' + short(v) + '; it must be ' + short(b)); }
          break;
        case 'minimum': if (isNum(v) && v < b) { add('QJ105', pointer(parts), where + ' is ' + short(v) + '; it must be >= ' + b); } break;
        case 'maximum': if (isNum(v) && v > b) { add('QJ105', pointer(parts), where + ' is ' + short(v) + '; it must be <= ' + b); } break;
        case 'exclusiveMinimum': if (isNum(v) && v <= b) { add('QJ105', pointer(parts), where + ' is ' + short(v) + '; it must be > ' + b); } break;
        case 'exclusiveMaximum': if (isNum(v) && v >= b) { add('QJ105', pointer(parts), where + ' is ' + short(v) + '; it must be < ' + b); } break;
        case 'pattern': if (typeof v === 'string' && !pyRegex(b).test(v)) { add('QJ107', pointer(parts), where + ' is ' + short(v) + '; it must ' + (schema.description || 'match ' + b)); } break;
        case 'minLength': if (typeof v === 'string' && [...v].length < b) { add('QJ107', pointer(parts), where + ' has ' + [...v].length + ' characters; minLength is ' + b); } break;
        case 'maxLength': if (typeof v === 'string' && [...v].length > b) { add('QJ107', pointer(parts), where + ' has ' + [...v].length + ' characters; maxLength is ' + b); } break;
        case 'minItems': if (Array.isArray(v) && v.length < b) { add('QJ108', pointer(parts), where + ' has ' + v.length + ' items; minItems is ' + b); } break;
        case 'maxItems': if (Array.isArray(v) && v.length > b) { add('QJ108', pointer(parts), where + ' has ' + v.length + ' items; maxItems is ' + b); } break;
        case 'uniqueItems':
          if (b && Array.isArray(v) && v.some(function (x, k) { return v.slice(0, k).some(function (y) { return jsEqual(x, y); }); })) {
            add('QJ108', pointer(parts), where + ' repeats an item: ' + short(v));
          }
          break;
        case 'required':
          if (jsType(v) === 'object') {
            b.forEach(function (n) { if (!Object.prototype.hasOwnProperty.call(v, n)) { add('QJ101', pointer(parts.concat([n])), pyRepr(n) + ' is missing from ' + where); } });
          }
          break;
        case 'properties':
          if (jsType(v) === 'object') {
            Object.keys(b).forEach(function (k) {
              if (Object.prototype.hasOwnProperty.call(v, k)) { out.push.apply(out, self.errors(b[k], v[k], parts.concat([k]), quick)); }
            });
          }
          break;
        case 'additionalProperties':
          if (jsType(v) === 'object') {
            var known = schema.properties || {};
            Object.keys(v).forEach(function (k) {
              if (Object.prototype.hasOwnProperty.call(known, k)) { return; }
              if (b === false) { add('QJ106', pointer(parts.concat([k])), pyRepr(k) + ' is not a field of ' + where); } else { out.push.apply(out, self.errors(b, v[k], parts.concat([k]), quick)); }
            });
          }
          break;
        case 'propertyNames':
          if (jsType(v) === 'object') {
            Object.keys(v).forEach(function (k) {
              if (self.errors(b, k, parts, true).length) { add('QJ106', pointer(parts.concat([k])), 'key ' + short(k) + ' is not allowed in ' + where); }
            });
          }
          break;
        case 'items':
          if (Array.isArray(v) && jsType(b) === 'object') {
            v.forEach(function (item, k) { out.push.apply(out, self.errors(b, item, parts.concat([k]), quick)); });
          }
          break;
        default: break;
      }
    });
    return out;
  };

  function structureProblems(rules, ctx, report, version) {
    var schema = version === rules.schema_v2 ? rules.schemas.v2 : rules.schemas.legacy;
    var run = new SchemaRun(rules, ctx, schema);
    var found = {};
    run.errors(schema, report, [], false).forEach(function (p) { found[p.path + '\u0000' + p.code + '\u0000' + p.message] = p; });
    var listed = Object.keys(found).sort().map(function (k) { return found[k]; });
    var cap = rules.max_schema_problems;
    if (listed.length > cap) {
      var rest = listed.length - (cap - 1);
      var first = listed[cap - 1];
      listed = listed.slice(0, cap - 1).concat([problem(rules, first.code, first.path, first.message + '; and ' + (rest - 1) + ' more schema problems not listed')]);
    }
    return listed;
  }

  // ---------------------------------------------------------------- semantic checks (schema/semantic.py)
  function num(block, key) {
    if (jsType(block) !== 'object') { return null; }
    var v = block[key];
    return typeof v === 'number' ? v : null;
  }
  function obj(block, key) {
    var v = jsType(block) === 'object' ? block[key] : undefined;
    return jsType(v) === 'object' ? v : {};
  }
  function text(block, key) {
    var v = jsType(block) === 'object' ? block[key] : undefined;
    return typeof v === 'string' ? v : '';
  }
  function has(block, key) { return jsType(block) === 'object' && Object.prototype.hasOwnProperty.call(block, key); }
  function cut(s, n) { return [...s].slice(0, n).join(''); }
  /* limits.half_unit: half a unit in the last printed place (an int literal's is 0.5). */
  function halfUnit(ctx, value, path) {
    if (typeof value !== 'number' || !isFinite(value)) { return 0; }
    if (ctx.isInt(path)) { return 0.5; }
    var exponent;
    if (Number.isInteger(value) && Math.abs(value) < 1e16) {
      exponent = -1;
    } else {
      var parts = value.toExponential().split('e');
      var digits = parts[0].replace('-', '').replace('.', '').length;
      exponent = parseInt(parts[1], 10) - (digits - 1);
    }
    return 0.5 * Math.pow(10, exponent);
  }
  function intervalsMeet(la, ha, lb, hb, slack) { return la <= hb + slack && lb <= ha + slack; }

  function sourceProblems(rules, report) {
    var results = obj(report, 'results');
    var basis = text(results, 'basis');
    var source = text(report, 'measurement_source');
    var v2 = report.schema_version === rules.schema_v2;
    var nvml = v2 ? rules.nvml_sources_v2.indexOf(source) !== -1 : source === rules.nvml_source_legacy;
    var path = '/measurement_source';
    if (basis === 'measured') {
      var notMeasured = v2 ? rules.not_measured_sources_v2.indexOf(source) !== -1 : new RegExp(rules.not_measured_words, 'i').test(source);
      if (notMeasured) {
        return [problem(rules, 'QJ202', path, 'measurement_source ' + pyRepr(cut(source, 80)) + " is not a measurement, yet results.basis is 'measured'")];
      }
      if (!nvml) {
        return [problem(rules, 'QJ201', path, source ? "results.basis is 'measured' but measurement_source " + pyRepr(cut(source, 80)) + ' is not an NVML source' : "results.basis is 'measured' but measurement_source is missing")];
      }
      var notes = [['/results/note', text(results, 'note')], ['/measurement/method', text(obj(report, 'measurement'), 'method')]];
      for (var k = 0; k < notes.length; k++) {
        if (new RegExp(rules.disowning_note, 'i').test(notes[k][1])) {
          return [problem(rules, 'QJ202', notes[k][0], "the text says the values are not a real measurement, yet results.basis is 'measured'")];
        }
      }
    } else if ((basis === 'interpolated' || basis === 'extrapolated') && nvml) {
      return [problem(rules, 'QJ201', path, 'results.basis is ' + pyRepr(basis) + ' but measurement_source ' + pyRepr(source) + ' says it was measured on this GPU')];
    }
    return [];
  }

  function deltaE(rules, ctx, results, energy, baseline, delta, found) {
    var q = num(results, energy);
    var f = num(results, baseline);
    var d = num(results, delta);
    if (q === null || f === null || d === null || f <= 0 || q <= 0) { return; }
    var dq = halfUnit(ctx, results[energy], '/results/' + energy);
    var df = halfUnit(ctx, results[baseline], '/results/' + baseline);
    var dd = halfUnit(ctx, results[delta], '/results/' + delta);
    var low = ((q - dq) / (f + df) - 1) * 100;
    var high = ((q + dq) / Math.max(f - df, 1e-300) - 1) * 100;
    if (!intervalsMeet(d - dd, d + dd, low, high, rules.limits.DELTA_E_SLACK_PP)) {
      found.push(problem(rules, 'QJ203', '/results/' + delta, delta + ' is ' + pyG(d) + ' but (' + energy + ' - ' + baseline + ') / ' + baseline + ' gives ' + pyFixed((q / f - 1) * 100, 2) + ' %'));
    }
  }

  function arithmeticProblems(rules, ctx, report) {
    var L = rules.limits;
    var results = obj(report, 'results');
    var found = [];
    deltaE(rules, ctx, results, 'energy_per_token_mj', 'fp16_energy_per_token_mj', 'vs_fp16_energy_pct', found);
    deltaE(rules, ctx, results, 'dynamic_energy_per_token_mj', 'fp16_dynamic_energy_per_token_mj', 'vs_fp16_dynamic_energy_pct', found);
    var perToken = num(results, 'energy_per_token_mj');
    var total = num(results, 'total_energy_joules');
    var tokens = num(results, 'tokens_generated');
    if (perToken && total && tokens && perToken > 0 && total > 0 && tokens > 0) {
      var computed = total / tokens * 1000;
      var spread = halfUnit(ctx, results.total_energy_joules, '/results/total_energy_joules') / tokens * 1000;
      var slack = L.RATIO_SLACK * computed + halfUnit(ctx, results.energy_per_token_mj, '/results/energy_per_token_mj') + spread;
      if (Math.abs(perToken - computed) > slack) {
        found.push(problem(rules, 'QJ204', '/results/energy_per_token_mj', 'energy_per_token_mj is ' + pyG(perToken) + ' but total_energy_joules / tokens_generated * 1000 is ' + pyG(computed, 4)));
      }
    }
    var power = num(results, 'avg_power_watts');
    var duration = num(results, 'duration_s');
    if (power && duration && total && Math.abs(power * duration - total) > L.POWER_TIME_REL * total) {
      found.push(problem(rules, 'QJ205', '/results/avg_power_watts', 'avg_power_watts x duration_s is ' + pyG(power * duration, 4) + ' J but total_energy_joules is ' + pyG(total) + ' J'));
    }
    var throughput = num(results, 'throughput_tokens_per_s');
    if (power && throughput && perToken && Math.min(power, throughput, perToken) > 0) {
      var implied = power / throughput * 1000;
      if (Math.abs(implied - perToken) > L.POWER_THROUGHPUT_REL * perToken) {
        found.push(problem(rules, 'QJ209', '/results/avg_power_watts', 'avg_power_watts / throughput_tokens_per_s gives ' + pyG(implied, 4) + ' mJ per token but energy_per_token_mj is ' + pyG(perToken)));
      }
    }
    return found;
  }

  function powerCapW(rules, report) {
    var sut = obj(report, 'system_under_test');
    var cards = num(sut, 'accelerator_count') || 1;
    var limit = num(sut, 'power_limit_w');
    if (limit && limit > 0) { return limit * rules.limits.POWER_LIMIT_FACTOR + rules.limits.POWER_LIMIT_MARGIN_W; }
    return rules.limits.POWER_CAP_UNKNOWN_W * Math.max(cards, 1);
  }

  function valueProblems(rules, report) {
    var L = rules.limits;
    var results = obj(report, 'results');
    var workload = obj(report, 'workload');
    var found = [];
    rules.positive_fields.forEach(function (key) {
      var v = num(results, key);
      if (v !== null && v <= 0) { found.push(problem(rules, 'QJ207', '/results/' + key, key + ' is ' + pyG(v) + '; it must be above 0')); }
    });
    var params = num(workload, 'params_b');
    if (params !== null && params <= 0) {
      found.push(problem(rules, 'QJ207', '/workload/params_b', 'params_b is ' + pyG(params) + '; it must be above 0'));
    } else if (params !== null && params > L.MAX_PARAMS_B) {
      found.push(problem(rules, 'QJ208', '/workload/params_b', 'params_b is ' + pyG(params) + ' billion; above the plausible ' + pyG(L.MAX_PARAMS_B)));
    }
    var power = num(results, 'avg_power_watts');
    var cap = powerCapW(rules, report);
    if (power !== null && power > cap) {
      found.push(problem(rules, 'QJ208', '/results/avg_power_watts', 'avg_power_watts is ' + pyG(power) + ' W, above the plausible ' + pyG(cap) + ' W for this GPU'));
    }
    ['energy_per_token_mj', 'fp16_energy_per_token_mj'].forEach(function (key) {
      var v = num(results, key);
      if (v !== null && v > L.MAX_ENERGY_PER_TOKEN_MJ) {
        found.push(problem(rules, 'QJ208', '/results/' + key, key + ' is ' + pyG(v) + ' mJ, above the plausible ' + pyG(L.MAX_ENERGY_PER_TOKEN_MJ) + ' mJ per token'));
      }
    });
    return found;
  }

  /* schema.models.model_key / lookup_model */
  function modelKey(rules, name) {
    var key = name.trim().toLowerCase();
    key = key.slice(key.lastIndexOf('/') + 1);
    if (key.indexOf('synthetic:') === 0) { key = key.slice('synthetic:'.length); }
    if (key.indexOf('meta-') === 0) { key = key.slice('meta-'.length); }
    var variant = new RegExp(rules.model_variant);
    var previous = null;
    while (previous !== key) { previous = key; key = key.replace(variant, ''); }
    return key;
  }
  function lookupModel(rules, names) {
    var table = {};
    rules.known_models.forEach(function (m) { table[modelKey(rules, m.name)] = m; });
    for (var k = 0; k < names.length; k++) {
      if (typeof names[k] === 'string' && names[k]) {
        var hit = table[modelKey(rules, names[k])];
        if (hit) { return hit; }
      }
    }
    return null;
  }

  function identityProblems(rules, report) {
    var workload = obj(report, 'workload');
    var found = [];
    var model = lookupModel(rules, [text(workload, 'model_name'), text(workload, 'model_id')]);
    var params = num(workload, 'params_b');
    var sizes = model ? [model.nominal_b, model.counted_b] : [];
    if (sizes.length && params && !sizes.some(function (ref) { return Math.abs(params - ref) <= rules.limits.PARAMS_REL * ref; })) {
      found.push(problem(rules, 'QJ211', '/workload/params_b', 'params_b is ' + pyG(params) + ' but ' + model.name + ' has ' + pyG(model.counted_b) + ' billion parameters (nominal ' + pyG(model.nominal_b) + ')'));
    }
    var arch = text(obj(report, 'system_under_test'), 'gpu_arch');
    if (rules.known_archs.indexOf(arch) === -1) {
      found.push(problem(rules, 'QJ212', '/system_under_test/gpu_arch', 'gpu_arch ' + pyRepr(cut(arch, 40)) + ' is not one of ' + rules.known_archs.join(', ')));
    }
    return found;
  }

  function baselineProblems(rules, report) {
    var results = obj(report, 'results');
    var found = [];
    var precision = text(obj(report, 'workload'), 'precision');
    var basis = text(results, 'basis');
    if (precision === 'FP16') {
      rules.baseline_fields.forEach(function (key) {
        if (has(results, key) && results[key] !== null) { found.push(problem(rules, 'QJ214', '/results/' + key, key + ' must be null in an FP16 report')); }
      });
      var stats = report.statistics;
      if (jsType(stats) === 'object' && (num(stats, 'n_pairs') || 0) > 0) {
        found.push(problem(rules, 'QJ214', '/statistics', 'an FP16 baseline report has no paired statistics (statistics must be null)'));
      }
    } else if (precision && basis !== 'unavailable') {
      ['fp16_energy_per_token_mj', 'vs_fp16_energy_pct'].forEach(function (key) {
        if (!has(results, key) || results[key] === null) { found.push(problem(rules, 'QJ214', '/results/' + key, 'a ' + precision + ' report needs ' + key + ' from its FP16 baseline')); }
      });
    }
    var needed = [];
    if (['measured', 'interpolated', 'extrapolated'].indexOf(basis) !== -1) { needed.push('energy_per_token_mj'); }
    if (basis === 'measured') {
      needed.push('total_energy_joules', 'tokens_generated');
      if (report.schema_version === rules.schema_v2) { needed.push('avg_power_watts', 'throughput_tokens_per_s', 'duration_s'); }
    }
    needed.forEach(function (key) {
      if (!has(results, key) || results[key] === null) { found.push(problem(rules, 'QJ217', '/results/' + key, 'results.basis is ' + pyRepr(basis) + ' but ' + key + ' is null or missing')); }
    });
    return found;
  }

  function nonFinitePaths(node) {
    var found = [];
    var stack = [[node, []]];
    while (stack.length) {
      var item = stack.pop();
      var cur = item[0];
      if (typeof cur === 'number' && !isFinite(cur)) { found.push(item[1]); } else if (Array.isArray(cur)) {
        cur.forEach(function (v, k) { stack.push([v, item[1].concat([k])]); });
      } else if (jsType(cur) === 'object') {
        Object.keys(cur).forEach(function (k) { stack.push([cur[k], item[1].concat([k])]); });
      }
    }
    return found.sort(function (a, b) { var x = a.map(String); var y = b.map(String); return x < y ? -1 : x > y ? 1 : 0; });
  }

  // ---------------------------------------------------------------- v2 consistency (schema/trials.py)
  function trialEnergy(t) {
    var c = num(t, 'counter_energy_j');
    if (c !== null) { return [c, 'counter_energy_j']; }
    return [num(t, 'trace_energy_j'), 'trace_energy_j'];
  }
  function okTrials(report) {
    if (!Array.isArray(report.trials)) { return []; }
    var out = [];
    report.trials.forEach(function (t, k) { if (jsType(t) === 'object' && t.status === 'ok') { out.push([k, t]); } });
    return out;
  }
  function worst(rules, list) {
    if (!list.length) { return []; }
    var best = list[0];
    list.forEach(function (item) { if (item[0] > best[0]) { best = item; } });
    var p = best[1];
    if (list.length > 1) { p = problem(rules, p.code, p.path, p.message + ' (and ' + (list.length - 1) + ' more trials)'); }
    return [p];
  }
  function perTrialProblems(rules, report) {
    var L = rules.limits;
    var found = [];
    var timeBad = [];
    var powerBad = [];
    var disagree = [];
    var cap = powerCapW(rules, report);
    var agreement = jsType(report.agreement) === 'object' ? report.agreement : {};
    var threshold = num(agreement, 'threshold_pct') || L.COUNTER_TRACE_DEFAULT_PCT;
    okTrials(report).forEach(function (pair) {
      var k = pair[0];
      var t = pair[1];
      var e = trialEnergy(t);
      if (e[0] === null) { found.push(problem(rules, 'QJ215', '/trials/' + k, 'an ok trial has neither counter_energy_j nor trace_energy_j')); return; }
      var power = num(t, 'mean_power_w');
      var duration = num(t, 'duration_s');
      if (power && duration && Math.abs(power * duration - e[0]) > L.POWER_TIME_REL * e[0]) {
        timeBad.push([Math.abs(power * duration - e[0]) / e[0], problem(rules, 'QJ205', '/trials/' + k + '/mean_power_w', 'trial ' + k + ': mean_power_w x duration_s is ' + pyG(power * duration, 4) + ' J but ' + e[1] + ' is ' + pyG(e[0]) + ' J')]);
      }
      if (power && power > cap) {
        powerBad.push([power, problem(rules, 'QJ208', '/trials/' + k + '/mean_power_w', 'trial ' + k + ': mean_power_w is ' + pyG(power) + ' W, above the plausible ' + pyG(cap) + ' W for this GPU')]);
      }
      var counter = num(t, 'counter_energy_j');
      var trace = num(t, 'trace_energy_j');
      if (counter && trace) {
        var gap = Math.abs(counter - trace) / counter * 100;
        if (gap > threshold) {
          disagree.push([gap, problem(rules, 'QJ210', '/trials/' + k + '/trace_energy_j', 'trial ' + k + ': counter ' + pyG(counter) + ' J and trace ' + pyG(trace) + ' J differ by ' + pyFixed(gap, 2) + ' %, over ' + pyG(threshold) + ' %')]);
        }
      }
    });
    found = found.concat(worst(rules, timeBad), worst(rules, powerBad), worst(rules, disagree));
    var reportedWorst = num(agreement, 'counter_vs_trace_max_pct');
    if (!disagree.length && reportedWorst !== null && reportedWorst > threshold) {
      found.push(problem(rules, 'QJ210', '/agreement/counter_vs_trace_max_pct', 'counter and trace differ by up to ' + pyG(reportedWorst) + ' %, over ' + pyG(threshold) + ' %'));
    }
    return found;
  }
  function sumCheck(rules, ctx, label, path, reported, trials, key, found) {
    var values = trials.map(function (t) { return key !== 'energy' ? num(t[1], key) : trialEnergy(t[1])[0]; });
    if (reported === null || !values.length || values.some(function (v) { return v === null; })) { return; }
    var total = pySum(values);
    var slack = rules.limits.RATIO_SLACK * Math.abs(total);
    trials.forEach(function (t) {
      var field = key !== 'energy' ? key : trialEnergy(t[1])[1];
      slack += halfUnit(ctx, t[1][field], '/trials/' + t[0] + '/' + field);
    });
    if (key === 'tokens') { slack = 0; }
    // The reported total went through num() (a float) in Python, so its int-ness is gone: no path.
    var own = halfUnit(ctx, reported, null);
    if (Math.abs(reported - total) > slack + own) {
      found.push(problem(rules, 'QJ215', path, label + ' is ' + pyG(reported) + ' but the ok trials sum to ' + pyG(total, 6)));
    }
  }
  function totalsProblems(rules, ctx, report) {
    var results = obj(report, 'results');
    var found = [];
    var precision = text(obj(report, 'workload'), 'precision');
    var ok = okTrials(report);
    var own = ok.filter(function (p) { return p[1].arm === precision; });
    if (results.basis === 'measured' && !own.length) { return [problem(rules, 'QJ215', '/trials', 'a measured report has no ok ' + precision + ' trial')]; }
    if (!own.length) { return []; }
    sumCheck(rules, ctx, 'total_energy_joules', '/results/total_energy_joules', num(results, 'total_energy_joules'), own, 'energy', found);
    sumCheck(rules, ctx, 'tokens_generated', '/results/tokens_generated', num(results, 'tokens_generated'), own, 'tokens', found);
    sumCheck(rules, ctx, 'duration_s', '/results/duration_s', num(results, 'duration_s'), own, 'duration_s', found);
    var baseline = ok.filter(function (p) { return p[1].arm === 'FP16'; });
    var reported = num(results, 'fp16_energy_per_token_mj');
    if (precision !== 'FP16' && baseline.length && reported) {
      var energies = baseline.map(function (p) { return trialEnergy(p[1])[0]; });
      var tokens = baseline.map(function (p) { return num(p[1], 'tokens'); });
      if (energies.indexOf(null) === -1 && tokens.indexOf(null) === -1 && pySum(tokens) > 0) {
        var computed = pySum(energies) / pySum(tokens) * 1000;
        var slack = rules.limits.RATIO_SLACK * computed + halfUnit(ctx, results.fp16_energy_per_token_mj, '/results/fp16_energy_per_token_mj');
        if (Math.abs(reported - computed) > slack) {
          found.push(problem(rules, 'QJ215', '/results/fp16_energy_per_token_mj', 'fp16_energy_per_token_mj is ' + pyG(reported) + ' but the ok FP16 trials give ' + pyG(computed, 5)));
        }
      }
    }
    return found;
  }
  function blockDeltas(ctx, report, precision) {
    var perBlock = {};
    okTrials(report).forEach(function (pair) {
      var t = pair[1];
      var e = trialEnergy(t)[0];
      var tokens = num(t, 'tokens');
      var block = t.block;
      if (e && tokens && typeof block === 'number' && ctx.isInt('/trials/' + pair[0] + '/block')) {
        (perBlock[block] = perBlock[block] || {})[t.arm] = e / tokens;
      }
    });
    return Object.keys(perBlock).map(Number).sort(function (a, b) { return a - b; })
      .filter(function (b) { return has(perBlock[b], precision) && has(perBlock[b], 'FP16'); })
      .map(function (b) { return (perBlock[b][precision] / perBlock[b].FP16 - 1) * 100; });
  }
  function median(values) {
    var s = values.slice().sort(function (a, b) { return a - b; });
    var n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
  function statisticsProblems(rules, ctx, report) {
    var L = rules.limits;
    var stats = report.statistics;
    var found = [];
    var precision = text(obj(report, 'workload'), 'precision');
    var measured = obj(report, 'results').basis === 'measured';
    if (precision === 'FP16' || jsType(stats) !== 'object') {
      if (precision !== 'FP16' && measured) { found.push(problem(rules, 'QJ213', '/statistics', 'a measured ' + precision + ' report needs its paired statistics')); }
      return found;
    }
    var nPairs = stats.n_pairs;
    var deltas = blockDeltas(ctx, report, precision);
    if (Array.isArray(report.trials) && report.trials.length && !(typeof nPairs === 'number' && nPairs === deltas.length)) {
      found.push(problem(rules, 'QJ213', '/statistics/n_pairs', 'n_pairs is ' + (nPairs === undefined ? 'None' : String(nPairs)) + ' but the trials hold ' + deltas.length + ' complete FP16/' + precision + ' blocks'));
    }
    if (measured && typeof nPairs === 'number' && nPairs === 0) { found.push(problem(rules, 'QJ213', '/statistics/n_pairs', 'a measured report needs at least one pair')); }
    var planned = obj(report, 'protocol').trials;
    var plannedInt = typeof planned === 'number' && ctx.isInt('/protocol/trials');
    var pairsInt = typeof nPairs === 'number' && ctx.isInt('/statistics/n_pairs');
    if (plannedInt && pairsInt && nPairs > planned) {
      found.push(problem(rules, 'QJ213', '/statistics/n_pairs', 'n_pairs ' + nPairs + ' exceeds protocol.trials ' + planned));
    }
    var summary = obj(stats, 'delta_e_pct');
    var low = num(summary, 'ci95_low');
    var mean = num(summary, 'mean');
    var high = num(summary, 'ci95_high');
    if (low !== null && mean !== null && high !== null && !(low - 1e-9 <= mean && mean <= high + 1e-9)) {
      found.push(problem(rules, 'QJ213', '/statistics/delta_e_pct', 'the CI [' + pyG(low) + ', ' + pyG(high) + '] does not contain the mean ' + pyG(mean)));
    }
    var half = num(summary, 'ci95_half_width_pp');
    if (low !== null && high !== null && half !== null) {
      var slack = 0.01;
      ['ci95_low', 'ci95_high', 'ci95_half_width_pp'].forEach(function (k) { slack += halfUnit(ctx, summary[k], '/statistics/delta_e_pct/' + k); });
      if (Math.abs((high - low) / 2 - half) > slack) {
        found.push(problem(rules, 'QJ213', '/statistics/delta_e_pct/ci95_half_width_pp', 'ci95_half_width_pp is ' + pyG(half) + ' but (ci95_high - ci95_low) / 2 is ' + pyG((high - low) / 2, 4)));
      }
    }
    if (deltas.length) {
      [['mean', fsum(deltas) / deltas.length], ['median', median(deltas)]].forEach(function (pair) {
        var reported = num(summary, pair[0]);
        var tol = Math.max(L.STATS_SLACK_PP, L.STATS_SLACK_REL * Math.abs(pair[1]));
        if (reported !== null && Math.abs(reported - pair[1]) > tol) {
          found.push(problem(rules, 'QJ213', '/statistics/delta_e_pct/' + pair[0], 'delta_e_pct.' + pair[0] + ' is ' + pyG(reported) + ' but the paired trials give ' + pyFixed(pair[1], 3)));
        }
      });
    }
    return found;
  }
  function armsProblems(rules, ctx, report) {
    var arms = report.arms;
    var results = obj(report, 'results');
    var found = [];
    if (jsType(arms) !== 'object') { return found; }
    var precision = text(obj(report, 'workload'), 'precision');
    var measured = results.basis === 'measured';
    var pairs = [[precision, 'energy_per_token_mj']];
    if (precision !== 'FP16') { pairs.push(['FP16', 'fp16_energy_per_token_mj']); }
    pairs.forEach(function (pair) {
      var name = pair[0];
      var field = pair[1];
      var arm = arms[name];
      if (!has(arms, name) || jsType(arm) !== 'object') {
        if (measured) { found.push(problem(rules, 'QJ216', '/arms/' + name, 'arms.' + name + ' is missing')); }
        return;
      }
      if (measured && arm.status !== 'ok') { found.push(problem(rules, 'QJ216', '/arms/' + name + '/status', 'arms.' + name + ' is ' + pyRepr(arm.status) + " but results.basis is 'measured'")); }
      var mine = num(arm, 'energy_per_token_mj');
      var theirs = num(results, field);
      if (mine !== null && theirs !== null) {
        var slack = rules.limits.RATIO_SLACK * theirs + halfUnit(ctx, arm.energy_per_token_mj, '/arms/' + name + '/energy_per_token_mj') + halfUnit(ctx, results[field], '/results/' + field);
        if (Math.abs(mine - theirs) > slack) {
          found.push(problem(rules, 'QJ216', '/arms/' + name + '/energy_per_token_mj', 'arms.' + name + '.energy_per_token_mj is ' + pyG(mine) + ' but results.' + field + ' is ' + pyG(theirs)));
        }
      }
    });
    return found;
  }

  function sortProblems(list) {
    return list.slice().sort(function (a, b) {
      var x = [a.path, a.code, a.message];
      var y = [b.path, b.code, b.message];
      for (var k = 0; k < 3; k++) { if (x[k] < y[k]) { return -1; } if (x[k] > y[k]) { return 1; } }
      return 0;
    });
  }
  function hasErrors(list) { return list.some(function (p) { return p.severity === 'error'; }); }

  /* schema.validate(report) */
  function validate(rules, ctx, report) {
    if (jsType(report) !== 'object') { return [problem(rules, 'QJ008', '', 'the report is not an object')]; }
    var found = versionProblems(rules, report);
    if (found.length) { return found; }
    found = nonFinitePaths(report).map(function (p) { return problem(rules, 'QJ206', pointer(p), pointer(p) + ' is not a finite number'); });
    // A non-finite number also breaks range rules; its one problem is that it is not finite.
    var located = {};
    found.forEach(function (p) { located[p.path] = true; });
    found = found.concat(structureProblems(rules, ctx, report, report.schema_version).filter(function (p) { return !located[p.path]; }));
    if (!hasErrors(found)) {
      found = found.concat(sourceProblems(rules, report), arithmeticProblems(rules, ctx, report), valueProblems(rules, report),
        identityProblems(rules, report), baselineProblems(rules, report));
      if (report.schema_version === rules.schema_v2) {
        found = found.concat(perTrialProblems(rules, report), totalsProblems(rules, ctx, report), statisticsProblems(rules, ctx, report), armsProblems(rules, ctx, report));
      }
    }
    return sortProblems(found);
  }

  // ---------------------------------------------------------------- curves (curves/model.py, store.py, grade.py)
  function curvePct(n, a, s, nStar) { var x = n / nStar; return a - s * x / (1.0 + x); }
  function extrapolationDoublings(n, band) {
    var lo = band.range_b[0];
    var hi = band.range_b[1];
    var tol = band.size_tolerance_rel;
    var loEdge = lo / (1.0 + tol);
    var hiEdge = hi * (1.0 + tol);
    if (n > hiEdge) { return Math.log2(n / hiEdge); }
    if (n < loEdge) { return Math.log2(loEdge / n); }
    return 0.0;
  }
  /* curves.model.admissible_half_width: half the ΔE% spread any in-bounds parameters give at n. */
  function admissibleHalfWidth(n, band) {
    var xMax = n / band.n_star_bounds_b[0];
    var xMin = n / band.n_star_bounds_b[1];
    var low = band.a_bounds[0] - band.s_bounds[1] * xMax / (1.0 + xMax);
    var high = band.a_bounds[1] - band.s_bounds[0] * xMin / (1.0 + xMin);
    return (high - low) / 2.0;
  }
  /* curves.model.parameter_variance: mean squared deviation of the curve at the stored sigma points. */
  function parameterVariance(group, n) {
    var p = group.params;
    var mean = curvePct(n, p.A, p.S, p.N_star);
    var points = group.band.sigma_points;
    var total = 0;
    points.forEach(function (q) { total += Math.pow(curvePct(n, q.A, q.S, q.N_star) - mean, 2); });
    return Math.min(total / points.length, Math.pow(admissibleHalfWidth(n, group.band), 2));
  }
  /* curves.model.predict_group: (mean ΔE%, prediction sd pp) */
  function predictGroup(group, n) {
    var p = group.params;
    var band = group.band;
    var mean = curvePct(n, p.A, p.S, p.N_star);
    var variance = parameterVariance(group, n) + Math.pow(band.sigma_pp, 2);
    var inflation = 1.0 + band.k_per_doubling * extrapolationDoublings(n, band);
    return [mean, Math.sqrt(variance) * inflation];
  }
  function normaliseArch(rules, arch) {
    if (typeof arch !== 'string' || !arch.trim()) { return null; }
    var name = arch.trim().toLowerCase().split(/\s+/).join(' ');
    return Object.prototype.hasOwnProperty.call(rules.arch_aliases, name) ? rules.arch_aliases[name] : name;
  }
  function uniqSorted(list) { return Array.from(new Set(list)).sort(); }
  /* curves.store.resolve_with_code */
  function resolveWithCode(rules, curves, arch, precision, backend) {
    var groups = curves.groups || {};
    var archN = normaliseArch(rules, arch);
    var prec = typeof precision === 'string' ? precision.trim().toUpperCase() : null;
    var back = typeof backend === 'string' && backend.trim() ? backend.trim().toLowerCase() : 'eager';
    var key = String(archN === null ? 'None' : archN) + '/' + String(prec === null ? 'None' : prec) + '/' + back;
    if (has(groups, key)) { return [key, groups[key], null, null]; }
    var all = Object.keys(groups).map(function (k) { return groups[k]; });
    var archs = uniqSorted(all.map(function (g) { return g.arch; }));
    if (archs.indexOf(archN) === -1) { return [null, null, 'QJ301', 'no reference curve for GPU architecture ' + pyRepr(arch) + ' (curves exist for ' + archs.join(', ') + ')']; }
    var backs = uniqSorted(all.filter(function (g) { return g.arch === archN; }).map(function (g) { return g.backend; }));
    if (backs.indexOf(back) === -1) { return [null, null, 'QJ302', 'no reference curve for backend ' + pyRepr(back) + ' (curves exist for ' + backs.join(', ') + ')']; }
    var precs = uniqSorted(all.filter(function (g) { return g.arch === archN && g.backend === back; }).map(function (g) { return g.precision; }));
    return [null, null, 'QJ308', 'no reference curve for precision ' + pyRepr(precision) + ' on ' + archN + ' (curves exist for ' + precs.join(', ') + ')'];
  }
  function get(o) {
    for (var k = 1; k < arguments.length; k++) {
      if (jsType(o) !== 'object') { return null; }
      o = has(o, arguments[k]) ? o[arguments[k]] : null;
    }
    return o === undefined ? null : o;
  }
  function number(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function textOf(v) { return typeof v === 'string' && v.trim() ? v.trim() : null; }
  function majorMinor(v) { return String(v).trim().split('+')[0].split('.').slice(0, 2).join('.'); }
  function softwareDiffers(report, curves) {
    var software = get(report, 'software');
    if (jsType(software) !== 'object') { return false; }
    var declared = software.differs_from_reference_pins;
    if (software.matches_reference_pins === false || (Array.isArray(declared) && declared.length)) { return true; }
    var pins = get(curves, 'settings', 'reference_software') || {};
    var packages = software.packages;
    if (jsType(pins) !== 'object' || jsType(packages) !== 'object') { return false; }
    return Object.keys(pins).sort().some(function (name) {
      return typeof packages[name] === 'string' && has(packages, name) && majorMinor(packages[name]) !== majorMinor(pins[name]);
    });
  }
  function floorPp(obs, cv) { return Math.sqrt(2.0) * cv * Math.max(0.0, 1.0 + obs / 100.0); }
  function trialsOf(ctx, report, legacy) {
    if (legacy) { return [1, null]; }
    var n = get(report, 'statistics', 'n_pairs');
    var nIsInt = typeof n === 'number' && ctx.isInt('/statistics/n_pairs');
    if (!nIsInt || n < 1) {
      n = get(report, 'protocol', 'trials');
      n = typeof n === 'number' && ctx.isInt('/protocol/trials') && n >= 1 ? n : 1;
      return [n, null];
    }
    var sd = number(get(report, 'statistics', 'delta_e_pct', 'sd'));
    return [n, sd !== null && sd >= 0 ? sd : null];
  }
  function verdict(fields) {
    var base = {
      label: 'ungraded', qualifiers: [], reason: null, reason_code: null, arch: null, precision: null, backend: null,
      params_b: null, n_trials: null, curve_key: null, curves_version: null, obs_pct: null, ref_pct: null, ref_source: null,
      sigma_obs_pp: null, sigma_ref_pp: null, z: null, band_low_pct: null, band_high_pct: null, sentence: ''
    };
    Object.keys(fields).forEach(function (k) { base[k] = fields[k]; });
    return base;
  }
  function ungraded(code, reason, base, qualifiers) {
    var f = { label: 'ungraded', qualifiers: uniqSorted(qualifiers), reason: reason, reason_code: code, sentence: 'Not graded: ' + reason + '.' };
    Object.keys(base).forEach(function (k) { f[k] = base[k]; });
    return verdict(f);
  }
  /* math.hypot as Python computes it, correctly rounded: a² + b² kept exactly as a double-double, a
   * Newton step on its square root, then the neighbour whose square is nearest the exact sum. */
  function split(a) { var c = 134217729 * a; var hi = c - (c - a); return [hi, a - hi]; }
  function twoProduct(a, b) {
    var p = a * b;
    var sa = split(a);
    var sb = split(b);
    return [p, ((sa[0] * sb[0] - p) + sa[0] * sb[1] + sa[1] * sb[0]) + sa[1] * sb[1]];
  }
  function twoSum(a, b) { var s = a + b; var bb = s - a; return [s, (a - (s - bb)) + (b - bb)]; }
  function nextAfter(x, up) {
    var view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    var bits = view.getBigUint64(0);
    view.setBigUint64(0, up ? bits + 1n : bits - 1n);
    return view.getFloat64(0);
  }
  function hypot(a, b) {
    a = Math.abs(a);
    b = Math.abs(b);
    var big = Math.max(a, b);
    // Outside this range the exact squares would under- or overflow; the builtin is as good as it gets there.
    if (!(big > 1e-140 && big < 1e140) || Math.min(a, b) < 1e-140) { return Math.hypot(a, b); }
    var aa = twoProduct(a, a);
    var bb = twoProduct(b, b);
    var s = twoSum(aa[0], bb[0]);
    var lo = s[1] + aa[1] + bb[1];
    var hi = s[0];
    function residual(c) {   // S - c², with S = hi + lo, evaluated with one rounding at the end
      var cc = twoProduct(c, c);
      return ((hi - cc[0]) - cc[1]) + lo;
    }
    var r = Math.sqrt(hi);
    r = r + residual(r) / (2 * r);
    var best = r;
    [nextAfter(r, false), nextAfter(r, true)].forEach(function (c) {
      // |sqrt(S) - c| = |S - c²| / (sqrt(S) + c): compare on that scale.
      if (Math.abs(residual(c)) / (r + c) < Math.abs(residual(best)) / (r + best)) { best = c; }
    });
    return best;
  }
  /* curves.grade.grade_point: the numeric core of the rule for one point against one curve group. */
  function gradePoint(G, group, paramsB, obs, nTrials, pairSd, cv) {
    var tol = group.band.size_tolerance_rel;
    var pred = predictGroup(group, paramsB);
    var sameSize = group.borrowed_from ? [] : group.anchors.filter(function (a) { return Math.abs(paramsB / a.params_b - 1.0) <= tol; }).map(function (a) { return a.delta_e_pct; });
    var ref;
    var refSource;
    var sigmaRef;
    if (sameSize.length) {
      ref = pySum(sameSize) / sameSize.length;
      refSource = 'anchors';
      sigmaRef = Math.max(pred[1], Math.sqrt(Math.pow(group.band.sigma_pp, 2) + Math.pow(group.band.sigma_fit_pp, 2) / sameSize.length));
    } else {
      ref = pred[0];
      refSource = 'curve';
      sigmaRef = pred[1];
    }
    var floor = floorPp(obs, cv);
    var sigmaObs = (nTrials < 2 || pairSd === null) ? floor : Math.max(pairSd, floor) / Math.sqrt(nTrials);
    var scale = hypot(sigmaObs, sigmaRef);
    var z = pyRound((obs - ref) / scale, 2);
    return { ref: ref, ref_source: refSource, n_same_size: sameSize.length, sigma_obs: sigmaObs, sigma_ref: sigmaRef,
      scale: scale, z: z, label: Math.abs(z) <= G.z_limit ? 'confirmation' : 'contradiction' };
  }

  /* curves.grade.grade(report, curves) */
  function grade(rules, ctx, report, curves) {
    var G = rules.grade;
    var version = textOf(get(curves, 'version'));
    if (jsType(report) !== 'object') { return ungraded('QJ307', 'the report is not a JSON object', { curves_version: version }, []); }
    var legacy = String(report.schema_version || '').indexOf(G.legacy_prefix) === 0;
    var arch = normaliseArch(rules, get(report, 'system_under_test', 'gpu_arch'));
    var precision = textOf(get(report, 'workload', 'precision'));
    precision = precision ? precision.toUpperCase() : null;
    var backend = (textOf(get(report, 'workload', 'backend')) || 'eager').toLowerCase();
    var paramsB = number(get(report, 'workload', 'params_b'));
    var obs = number(get(report, 'results', 'vs_fp16_energy_pct'));
    var tr = trialsOf(ctx, report, legacy);
    var nTrials = tr[0];
    var pairSd = tr[1];
    var qualifiers = [];
    if (legacy) { qualifiers.push('legacy-schema'); }
    if (get(report, 'workload', 'weights') === 'random-init') { qualifiers.push('random-init-weights'); }
    if (softwareDiffers(report, curves)) { qualifiers.push('software-differs'); }
    var base = { arch: arch, precision: precision, backend: backend, params_b: paramsB, n_trials: nTrials, curves_version: version, obs_pct: obs === null ? null : pyRound(obs, 3) };
    var basis = get(report, 'results', 'basis');
    var source = get(report, 'measurement_source');
    if (basis !== 'measured' || G.measured_sources.indexOf(source) === -1) {
      return ungraded('QJ303', 'not a measurement (basis ' + pyRepr(basis) + ', measurement_source ' + pyRepr(source) + "); only 'measured' from an NVML source is graded", base, qualifiers);
    }
    if (precision === 'FP16') { return ungraded('QJ304', 'an FP16-only baseline has no quantized arm to compare', base, qualifiers); }
    var resolved = resolveWithCode(rules, curves, arch, precision, backend);
    var key = resolved[0];
    var group = resolved[1];
    if (key === null) { return ungraded(resolved[2], resolved[3], base, qualifiers); }
    if (paramsB === null || paramsB <= 0) { return ungraded('QJ305', 'workload.params_b is missing or not positive', base, qualifiers); }
    if (obs === null) { return ungraded('QJ306', 'results.vs_fp16_energy_pct is missing or not finite', base, qualifiers); }
    if (nTrials === 1) { qualifiers.push('single-trial'); }
    var settings = curves.settings || {};
    var cv = has(settings, 'repeatability_cv_pct') ? settings.repeatability_cv_pct : 2.0;
    var point = gradePoint(G, group, paramsB, obs, nTrials, pairSd, cv);
    var ref = point.ref;
    var refSource = point.ref_source;
    var sigmaObs = point.sigma_obs;
    var sigmaRef = point.sigma_ref;
    var scale = point.scale;
    var z = point.z;
    var label = point.label;
    var sameSize = point.n_same_size;
    if (group.borrowed_from) { qualifiers.push('borrowed-curve'); }
    if (extrapolationDoublings(paramsB, group.band) > 0) { qualifiers.push('extrapolated-size'); }
    var opposite = obs * ref < 0;
    if (opposite) { qualifiers.push('opposite-sign'); }
    var anchorsText = sameSize === 1 ? 'the same-size anchor' : 'mean of ' + sameSize + ' same-size anchors';
    var sourceText = refSource === 'anchors' ? anchorsText : group.borrowed_from ? group.borrowed_from + ' curve, borrowed' : 'curve';
    var sentence = precision + ' on ' + arch + ' at ' + pyFixed(paramsB, 2) + ' B: measured ' + pyFixed(obs, 1, true) + ' % energy per token vs FP16, reference ' +
      pyFixed(ref, 1, true) + ' % (' + sourceText + '), z = ' + pyFixed(z, 2, true) + ': a ' + label +
      (opposite ? '; the two disagree on whether quantization saves energy' : '') + '.';
    return verdict({
      label: label, qualifiers: uniqSorted(qualifiers), reason: null, reason_code: null, arch: arch, precision: precision,
      backend: backend, params_b: paramsB, n_trials: nTrials, curve_key: key, curves_version: version,
      obs_pct: pyRound(obs, 3), ref_pct: pyRound(ref, 3), ref_source: refSource, sigma_obs_pp: pyRound(sigmaObs, 3),
      sigma_ref_pp: pyRound(sigmaRef, 3), z: z, band_low_pct: pyRound(ref - G.z_limit * scale, 3),
      band_high_pct: pyRound(ref + G.z_limit * scale, 3), sentence: sentence
    });
  }

  /* curves.check.check_text: parse, validate, then grade (validation errors make it ungraded, QJ307). */
  function checkText(rules, curves, data) {
    var parsed = parseReport(rules, data);
    if (parsed.report === null) { return { ok: false, problems: parsed.problems, verdict: null, report: null }; }
    var found = parsed.problems.concat(validate(rules, parsed.ctx, parsed.report));
    var v;
    if (hasErrors(found)) {
      var n = found.filter(function (p) { return p.severity === 'error'; }).length;
      v = ungraded('QJ307', 'the report has ' + n + ' validation error(s)', { curves_version: textOf(get(curves, 'version')) }, []);
    } else {
      v = grade(rules, parsed.ctx, parsed.report, curves);
    }
    return { ok: !hasErrors(found), problems: found, verdict: v, report: parsed.report };
  }

  /* gallery.plots.place: where a data point lands over a plot image, in % of its width and height. */
  function placeOnPlot(geom, paramsB, deltaPct) {
    var a = geom.axes;
    var fx = (Math.log(Math.max(paramsB, 1e-9)) - Math.log(geom.x_range[0])) / (Math.log(geom.x_range[1]) - Math.log(geom.x_range[0]));
    var fy = (deltaPct - geom.y_range[0]) / (geom.y_range[1] - geom.y_range[0]);
    var clipped = !(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1);
    fx = Math.min(Math.max(fx, 0), 1);
    fy = Math.min(Math.max(fy, 0), 1);
    return { left: (a[0] + fx * a[2]) * 100, top: (1 - (a[1] + fy * a[3])) * 100, clipped: clipped };
  }

  // ---------------------------------------------------------------- the panel (browser only)
  function el(doc, tag, text, cls) {
    var node = doc.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function fmt(v, d, sign) { return v === null || v === undefined ? '—' : pyFixed(v, d, sign); }

  function showResult(doc, result, gallery) {
    var out = doc.getElementById('check-result');
    var plotSlot = doc.getElementById('check-plot');
    out.textContent = '';
    plotSlot.textContent = '';
    var v = result.verdict;
    var head = el(doc, 'p');
    head.appendChild(doc.createTextNode('Verdict: '));
    var label = v ? v.label : 'unreadable';
    head.appendChild(el(doc, 'span', label, 'label label-' + (v ? v.label : 'ungraded')));
    head.id = 'check-verdict';
    head.setAttribute('data-label', label);
    out.appendChild(head);
    if (v) {
      out.appendChild(el(doc, 'p', v.sentence, 'sentence'));
      if (v.label !== 'ungraded') {
        var table = el(doc, 'table', null, 'numbers');
        [['observed ΔE%', fmt(v.obs_pct, 1, true)], ['reference ΔE% (' + v.ref_source + ')', fmt(v.ref_pct, 1, true)],
          ['σ observed (pp)', fmt(v.sigma_obs_pp, 2)], ['σ reference (pp)', fmt(v.sigma_ref_pp, 2)], ['z', fmt(v.z, 2, true)],
          ['band', '[' + fmt(v.band_low_pct, 1, true) + ', ' + fmt(v.band_high_pct, 1, true) + ']'],
          ['qualifiers', v.qualifiers.join(', ') || '—'], ['curve', v.curve_key]].forEach(function (row) {
          var tr = el(doc, 'tr');
          tr.appendChild(el(doc, 'th', row[0]));
          tr.appendChild(el(doc, 'td', row[1]));
          table.appendChild(tr);
        });
        out.appendChild(table);
      }
    }
    if (result.problems.length) {
      var list = el(doc, 'ul', null, 'problems');
      result.problems.forEach(function (p) {
        var li = el(doc, 'li', null, 'problem-' + p.severity);
        li.setAttribute('data-code', p.code);
        li.textContent = p.code + ' ' + p.severity + ' ' + (p.path || '/') + ': ' + p.message + ' — ' + p.hint;
        list.appendChild(li);
      });
      out.appendChild(list);
    } else {
      out.appendChild(el(doc, 'p', 'No problems found.'));
    }
    if (!v || v.obs_pct === null || v.params_b === null || !gallery) { return; }
    var name = String(v.arch) + '-' + String(v.precision);
    var geom = gallery.plots[name];
    var original = doc.getElementById('plot-' + name);
    if (!geom || !original) { return; }
    var figure = original.cloneNode(true);
    figure.id = 'check-figure';
    var spot = placeOnPlot(geom, v.params_b, v.obs_pct);
    var svg = figure.querySelector('svg.overlay');
    var circle = doc.createElementNS('http://www.w3.org/2000/svg', 'circle');
    circle.setAttribute('class', spot.clipped ? 'you clipped' : 'you');
    circle.setAttribute('cx', (spot.left * geom.size_px[0] / 100).toFixed(1));
    circle.setAttribute('cy', (spot.top * geom.size_px[1] / 100).toFixed(1));
    circle.setAttribute('r', '11');
    svg.appendChild(circle);
    var caption = figure.querySelector('figcaption');
    caption.textContent = 'Your point (ringed) on the ' + name + ' plot' + (spot.clipped ? ', outside the plotted range and shown at its edge' : '') + '.';
    plotSlot.appendChild(figure);
  }

  function mountPanel(doc, curves, gallery) {
    var rules = root.QJ_RULES;
    if (!rules) { return; }
    function run(data) { showResult(doc, checkText(rules, curves, data), gallery); }
    var zone = doc.getElementById('dropzone');
    function readFile(file) {
      var reader = new FileReader();
      reader.onload = function () { run(new Uint8Array(reader.result)); };
      reader.readAsArrayBuffer(file.slice(0, rules.max_report_bytes + 1));
    }
    zone.addEventListener('dragover', function (e) { e.preventDefault(); zone.classList.add('over'); });
    zone.addEventListener('dragleave', function () { zone.classList.remove('over'); });
    zone.addEventListener('drop', function (e) {
      e.preventDefault();
      zone.classList.remove('over');
      var files = e.dataTransfer && e.dataTransfer.files;
      if (files && files.length) { readFile(files[0]); } else if (e.dataTransfer) { run(e.dataTransfer.getData('text/plain')); }
    });
    doc.getElementById('file-input').addEventListener('change', function () { if (this.files.length) { readFile(this.files[0]); } });
    doc.getElementById('check-button').addEventListener('click', function () { run(doc.getElementById('paste').value); });
    doc.getElementById('paste').addEventListener('paste', function () { setTimeout(function () { run(doc.getElementById('paste').value); }, 0); });
  }

  var api = {
    pyRound: pyRound, pyFixed: pyFixed, fsum: fsum, hypot: hypot, gradePoint: gradePoint, parseReport: parseReport, validate: validate, grade: grade,
    checkText: checkText, predictGroup: predictGroup, resolveWithCode: resolveWithCode, placeOnPlot: placeOnPlot,
    halfUnit: halfUnit, mountPanel: mountPanel
  };
  if (typeof module !== 'undefined' && module.exports) { module.exports = api; } else { root.QJCheck = api; }
}(typeof window !== 'undefined' ? window : this));
