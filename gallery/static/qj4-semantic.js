/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * Semantic checks of schema/semantic.py: basis vs source, arithmetic, plausibility, model size, architecture.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var jsType = QJ.jsType;
  var problem = QJ.problem;
  var pyFixed = QJ.pyFixed;
  var pyG = QJ.pyG;
  var pyRepr = QJ.pyRepr;

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
  /* limits.written_half_unit: in a v2 report never more than half a unit of the V2_SIGNIFICANT_DIGITS-th
   * figure, the precision measure writes (5.50000 prints as 5.5). */
  function writtenHalfUnit(rules, ctx, value, path, v2) {
    var printed = halfUnit(ctx, value, path);
    if (!v2 || !printed || !value) { return printed; }
    var top = parseInt(value.toExponential().split('e')[1], 10);
    return Math.min(printed, 0.5 * Math.pow(10, top - (rules.limits.V2_SIGNIFICANT_DIGITS - 1)));
  }
  function intervalsMeet(la, ha, lb, hb, slack) { return la <= hb + slack && lb <= ha + slack; }

  /* schema.text.skeleton: NFKC, case folded, no combining marks or invisible/format characters,
   * look-alike letters mapped to Latin ones, runs of space collapsed (what word rules match). */
  var toLatin = null;
  function skeleton(rules, value) {
    if (toLatin === null) {
      toLatin = {};
      Object.keys(rules.confusables).forEach(function (latin) {
        [...rules.confusables[latin]].forEach(function (ch) { toLatin[ch] = latin; });
      });
    }
    var t = String(value === null || value === undefined ? '' : value).normalize('NFKC');
    t = t.split(/\s+/).filter(Boolean).join(' ').toLowerCase().normalize('NFKD');
    t = t.replace(/[\p{Mn}\p{Me}\p{Cf}\p{Cc}\p{Cs}]/gu, '').replace(new RegExp(rules.invisible, 'gu'), '');
    t = [...t.normalize('NFKC')].map(function (ch) { return toLatin[ch] || ch; }).join('');
    return t.split(/\s+/).filter(Boolean).join(' ');
  }

  /* schema.gpus.arch_for: the architecture of an NVML device name by measure's table, or null. */
  function archFor(rules, name) {
    if (typeof name !== 'string') { return null; }
    var n = ' ' + name.toUpperCase().split('NVIDIA ').join(' ').split('GEFORCE ').join(' ').split(/\s+/).filter(Boolean).join(' ') + ' ';
    for (var k = 0; k < rules.gpu_arch_patterns.length; k++) {
      if (new RegExp(rules.gpu_arch_patterns[k][0]).test(n)) { return rules.gpu_arch_patterns[k][1]; }
    }
    return null;
  }

  function sourceProblems(rules, report) {
    var results = obj(report, 'results');
    var basis = text(results, 'basis');
    var source = text(report, 'measurement_source');
    var v2 = report.schema_version === rules.schema_v2;
    var nvml = v2 ? rules.nvml_sources_v2.indexOf(source) !== -1 : source === rules.nvml_source_legacy;
    var path = '/measurement_source';
    if (basis === 'measured') {
      var notMeasured = v2 ? rules.not_measured_sources_v2.indexOf(source) !== -1 : new RegExp(rules.not_measured_words, 'i').test(skeleton(rules, source));
      if (notMeasured) {
        return [problem(rules, 'QJ202', path, 'measurement_source ' + pyRepr(cut(source, 80)) + " is not a measurement, yet results.basis is 'measured'")];
      }
      if (!nvml) {
        return [problem(rules, 'QJ201', path, source ? "results.basis is 'measured' but measurement_source " + pyRepr(cut(source, 80)) + ' is not an NVML source' : "results.basis is 'measured' but measurement_source is missing")];
      }
      var notes = [['/results/note', text(results, 'note')], ['/measurement/method', text(obj(report, 'measurement'), 'method')]];
      for (var k = 0; k < notes.length; k++) {
        if (new RegExp(rules.disowning_note, 'i').test(skeleton(rules, notes[k][1]))) {
          return [problem(rules, 'QJ202', notes[k][0], "the text says the values are not a real measurement, yet results.basis is 'measured'")];
        }
      }
    } else if ((basis === 'interpolated' || basis === 'extrapolated') && nvml) {
      return [problem(rules, 'QJ201', path, 'results.basis is ' + pyRepr(basis) + ' but measurement_source ' + pyRepr(source) + ' says it was measured on this GPU')];
    }
    return [];
  }

  function deltaE(rules, ctx, results, energy, baseline, delta, found, v2) {
    var q = num(results, energy);
    var f = num(results, baseline);
    var d = num(results, delta);
    if (q === null || f === null || d === null || f <= 0 || q <= 0) { return; }
    var dq = writtenHalfUnit(rules, ctx, results[energy], '/results/' + energy, v2);
    var df = writtenHalfUnit(rules, ctx, results[baseline], '/results/' + baseline, v2);
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
    var v2 = report.schema_version === rules.schema_v2;
    deltaE(rules, ctx, results, 'energy_per_token_mj', 'fp16_energy_per_token_mj', 'vs_fp16_energy_pct', found, v2);
    deltaE(rules, ctx, results, 'dynamic_energy_per_token_mj', 'fp16_dynamic_energy_per_token_mj', 'vs_fp16_dynamic_energy_pct', found, v2);
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
    var sut = obj(report, 'system_under_test');
    var arch = text(sut, 'gpu_arch');
    if (rules.known_archs.indexOf(arch) === -1) {
      found.push(problem(rules, 'QJ212', '/system_under_test/gpu_arch', 'gpu_arch ' + pyRepr(cut(arch, 40)) + ' is not one of ' + rules.known_archs.join(', ')));
    } else {
      var table = archFor(rules, text(sut, 'gpu'));
      if (table !== null && table !== arch) {
        found.push(problem(rules, 'QJ218', '/system_under_test/gpu_arch', 'gpu_arch is ' + pyRepr(arch) + ' but the GPU ' + pyRepr(cut(text(sut, 'gpu'), 60)) + ' is ' + table));
      }
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
      // as schema/semantic.py: a reference value read off a curve has a dE% but no energies; a measurement has both
      var keys = ['vs_fp16_energy_pct'].concat(basis === 'measured' ? ['fp16_energy_per_token_mj'] : []);
      keys.forEach(function (key) {
        if (!has(results, key) || results[key] === null) { found.push(problem(rules, 'QJ214', '/results/' + key, 'this ' + precision + ' report needs ' + key + ' from its FP16 baseline')); }
      });
    }
    var needed = [];
    if ((basis === 'interpolated' || basis === 'extrapolated') && precision === 'FP16') { needed.push('energy_per_token_mj'); }
    if (basis === 'measured') {
      needed.push('energy_per_token_mj', 'total_energy_joules', 'tokens_generated', 'avg_power_watts', 'throughput_tokens_per_s');
      if (report.schema_version === rules.schema_v2) { needed.push('duration_s'); }
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

  QJ.archFor = archFor;
  QJ.skeleton = skeleton;
  QJ.arithmeticProblems = arithmeticProblems;
  QJ.baselineProblems = baselineProblems;
  QJ.cut = cut;
  QJ.deltaE = deltaE;
  QJ.halfUnit = halfUnit;
  QJ.writtenHalfUnit = writtenHalfUnit;
  QJ.has = has;
  QJ.identityProblems = identityProblems;
  QJ.intervalsMeet = intervalsMeet;
  QJ.lookupModel = lookupModel;
  QJ.modelKey = modelKey;
  QJ.nonFinitePaths = nonFinitePaths;
  QJ.num = num;
  QJ.obj = obj;
  QJ.powerCapW = powerCapW;
  QJ.sourceProblems = sourceProblems;
  QJ.text = text;
  QJ.valueProblems = valueProblems;
}(typeof window !== 'undefined' ? window : globalThis));
