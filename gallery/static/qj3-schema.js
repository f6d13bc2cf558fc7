/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * The JSON Schema keywords the report schemas use, each violation mapped to its QJ1xx code as schema/structure.py does.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var isNum = QJ.isNum;
  var pointer = QJ.pointer;
  var problem = QJ.problem;
  var pyRepr = QJ.pyRepr;

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

  QJ.KEYWORD_CODES = KEYWORD_CODES;
  QJ.SchemaRun = SchemaRun;
  QJ.describeType = describeType;
  QJ.isType = isType;
  QJ.jsEqual = jsEqual;
  QJ.jsType = jsType;
  QJ.pyRegex = pyRegex;
  QJ.short = short;
  QJ.structureProblems = structureProblems;
}(typeof window !== 'undefined' ? window : globalThis));
