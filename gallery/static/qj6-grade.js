/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * curves/model.py, store.py, grade.py, check.py: the band, curve lookup, math.hypot, the verdict, check_text.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var has = QJ.has;
  var hasErrors = QJ.hasErrors;
  var jsType = QJ.jsType;
  var parseReport = QJ.parseReport;
  var pyFixed = QJ.pyFixed;
  var pyRepr = QJ.pyRepr;
  var pyRound = QJ.pyRound;
  var pySum = QJ.pySum;
  var pyG = QJ.pyG;
  var validate = QJ.validate;

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
    var unfitted = curves.unfitted;
    if (jsType(unfitted) === 'object' && has(unfitted, key) && typeof unfitted[key] === 'string') {
      return [null, null, 'QJ301', 'no ' + key + ' curve yet: ' + unfitted[key]];
    }
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
  /* curves.grade.report_condition / condition_text / condition_mismatch / self_anchored */
  function intAt(ctx, report, path, keys) {
    var v = get.apply(null, [report].concat(keys));
    return typeof v === 'number' && ctx.isInt(path) ? v : null;
  }
  function reportCondition(ctx, report) {
    return { batch_size: intAt(ctx, report, '/workload/batch_size', ['workload', 'batch_size']),
      generation_tokens: intAt(ctx, report, '/measurement/tokens_per_run', ['measurement', 'tokens_per_run']) };
  }
  function conditionText(backend, c) {
    return backend + ', batch ' + (c.batch_size !== null ? String(c.batch_size) : 'not stated') + ', ' +
      (c.generation_tokens !== null ? String(c.generation_tokens) : 'unstated') + '-token generations';
  }
  function conditionMismatch(found, wanted) {
    var why = [];
    if (found.generation_tokens !== null && found.generation_tokens !== wanted.generation_tokens) { why.push(found.generation_tokens + '-token generations'); }
    if (found.batch_size !== null && found.batch_size !== wanted.batch_size) { why.push('batch ' + found.batch_size); }
    return why.length ? why.join(' and ') : null;
  }
  function reportId(report) {
    var prec = get(report, 'workload', 'precision');
    return [get(report, 'timestamp_utc'), prec ? String(prec).toUpperCase() : null, get(report, 'system_under_test', 'gpu_uuid_sha256')]
      .map(function (v) { return v === null || v === '' ? '' : String(v); }).join('|');
  }
  function selfAnchored(report, group) {
    var ident = reportId(report);
    return (group.anchors || []).some(function (a) { return a.report_id && a.report_id === ident; });
  }
  function verdict(fields) {
    var base = {
      label: 'ungraded', qualifiers: [], reason: null, reason_code: null, arch: null, precision: null, backend: null,
      params_b: null, n_trials: null, curve_key: null, curves_version: null, obs_pct: null, ref_pct: null, ref_source: null,
      sigma_obs_pp: null, sigma_ref_pp: null, z: null, band_low_pct: null, band_high_pct: null, sentence: '',
      condition: null, min_detectable_pp: null
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
  /* curves.grade.own_runs: the curve's own runs of this model at this size as the reference, or null. */
  function ownRuns(group, anchors, model, cv) {
    var tau = group.band.tau_pp;
    var name = (model || '').trim().toLowerCase();
    if (tau === undefined || tau === null || !name || !anchors.length) { return null; }
    if (anchors.some(function (a) { return String(a.model || '').trim().toLowerCase() !== name || a.se_pp === undefined || a.se_pp === null; })) { return null; }
    var values = anchors.map(function (a) { return a.delta_e_pct; });
    var tauEff = Math.max(tau, floorPp(pySum(values) / values.length, cv));
    var tau2 = tauEff * tauEff;
    var weights = anchors.map(function (a) { return 1.0 / (a.se_pp * a.se_pp + tau2); });
    var total = pySum(weights);
    var ref = pySum(weights.map(function (w, i) { return w * values[i]; })) / total;
    return [ref, Math.sqrt(1.0 / total + tau2)];
  }
  /* curves.grade.grade_point: the numeric core of the rule for one point against one curve group. */
  function gradePoint(G, group, paramsB, obs, nTrials, pairSd, cv, model) {
    var tol = group.band.size_tolerance_rel;
    var pred = predictGroup(group, paramsB);
    var anchors = group.borrowed_from ? [] : group.anchors.filter(function (a) { return Math.abs(paramsB / a.params_b - 1.0) <= tol; });
    var sameSize = anchors.map(function (a) { return a.delta_e_pct; });
    var ref;
    var refSource;
    var sigmaRef;
    var runs = ownRuns(group, anchors, model, cv);
    if (runs !== null) {
      ref = runs[0];
      refSource = 'runs';
      sigmaRef = runs[1];
    } else if (sameSize.length) {
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
    // The curve follows the GPU's name by measure's table (schema.gpus); an unknown name keeps the stated arch.
    var gpuName = get(report, 'system_under_test', 'gpu');
    var tableArch = typeof gpuName === 'string' ? QJ.archFor(rules, gpuName) : null;
    var stated = get(report, 'system_under_test', 'gpu_arch');
    var arch = normaliseArch(rules, tableArch !== null ? tableArch : (typeof stated === 'string' && stated ? stated : null));
    var precision = textOf(get(report, 'workload', 'precision'));
    precision = precision ? precision.toUpperCase() : null;
    var backend = (textOf(get(report, 'workload', 'backend')) || 'eager').toLowerCase();
    var paramsB = number(get(report, 'workload', 'params_b'));
    var obs = number(get(report, 'results', 'vs_fp16_energy_pct'));
    var tr = trialsOf(ctx, report, legacy);
    var nTrials = tr[0];
    var pairSd = tr[1];
    var qualifiers = tableArch !== null ? [] : ['arch-unverified'];
    if (legacy) { qualifiers.push('legacy-schema'); }
    if (get(report, 'workload', 'weights') === 'random-init') { qualifiers.push('random-init-weights'); }
    if (softwareDiffers(report, curves)) { qualifiers.push('software-differs'); }
    var found = reportCondition(ctx, report);
    var base = { arch: arch, precision: precision, backend: backend, params_b: paramsB, n_trials: nTrials, curves_version: version, obs_pct: obs === null ? null : pyRound(obs, 3),
      condition: conditionText(backend, found) };
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
    var wanted = group.condition || G.reference_condition;
    var mismatch = conditionMismatch(found, wanted);
    var threshold = number(get(report, 'workload', 'int8_outlier_threshold'));
    if (precision === 'INT8' && threshold !== null && threshold !== G.llm_int8_threshold) {
      var other = 'INT8 outlier threshold ' + pyG(threshold) + ' (not LLM.int8(), whose threshold is ' + pyG(G.llm_int8_threshold) + ')';
      mismatch = mismatch ? mismatch + ' and ' + other : other;
    }
    var plant = get(report, 'workload', 'outlier_plant');
    if (jsType(plant) === 'object') {
      var dims = number(get(plant, 'dims'));
      var scaleP = number(get(plant, 'scale'));
      var planted = 'planted outlier features' + (dims !== null && scaleP !== null ? ' (' + pyG(dims) + ' hidden dims at scale ' + pyG(scaleP) + ')' : '');
      mismatch = mismatch ? mismatch + ' and ' + planted : planted;
    }
    if (mismatch) {
      return ungraded('QJ309', 'measured with ' + mismatch + ', but the ' + key + ' curve grades ' +
        conditionText(backend, wanted).split(', ').slice(1).join(', ') + ' (like with like only; ' +
        'python -m measure run measures whole 256-token generations at batch 1 by default)', base, qualifiers);
    }
    if (paramsB === null || paramsB <= 0) { return ungraded('QJ305', 'workload.params_b is missing or not positive', base, qualifiers); }
    if (obs === null) { return ungraded('QJ306', 'results.vs_fp16_energy_pct is missing or not finite', base, qualifiers); }
    if (nTrials === 1) { qualifiers.push('single-trial'); }
    var settings = curves.settings || {};
    var cv = has(settings, 'repeatability_cv_pct') ? settings.repeatability_cv_pct : 2.0;
    /* the model as the known-model table names it, found from model_name or model_id (curves.grade.grade) */
    var modelName = textOf(get(report, 'workload', 'model_name'));
    var known = QJ.lookupModel(rules, [modelName, textOf(get(report, 'workload', 'model_id'))]);
    var model = known ? known.name : modelName;
    var point = gradePoint(G, group, paramsB, obs, nTrials, pairSd, cv, model);
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
    var anchored = selfAnchored(report, group);
    if (anchored) { qualifiers.push('self-anchored'); }
    var mdd = G.z_limit * scale;
    var anchorsText = sameSize === 1 ? 'the same-size anchor' : 'mean of ' + sameSize + ' same-size anchors';
    var runsText = sameSize === 1 ? "the curve's run of " + model : "weighted mean of the curve's " + sameSize + ' runs of ' + model;
    var sourceText = refSource === 'runs' ? runsText : refSource === 'anchors' ? anchorsText : group.borrowed_from ? group.borrowed_from + ' curve, borrowed' : 'curve';
    var sentence = precision + ' on ' + arch + ' at ' + pyFixed(paramsB, 2) + ' B: measured ' + pyFixed(obs, 1, true) + ' % energy per token vs FP16, reference ' +
      pyFixed(ref, 1, true) + ' % (' + sourceText + '), z = ' + pyFixed(z, 2, true) + ': a ' + label +
      (opposite ? '; the two disagree on whether quantization saves energy' : '') +
      '. It could detect a difference of ' + pyFixed(mdd, 1) + ' pp or more' +
      (anchored ? '; this report is an anchor of the curve, so it is compared with itself and is not an independent check' : '') + '.';
    return verdict({
      label: label, qualifiers: uniqSorted(qualifiers), reason: null, reason_code: null, arch: arch, precision: precision,
      backend: backend, params_b: paramsB, n_trials: nTrials, curve_key: key, curves_version: version,
      obs_pct: pyRound(obs, 3), ref_pct: pyRound(ref, 3), ref_source: refSource, sigma_obs_pp: pyRound(sigmaObs, 3),
      sigma_ref_pp: pyRound(sigmaRef, 3), z: z, band_low_pct: pyRound(ref - G.z_limit * scale, 3),
      band_high_pct: pyRound(ref + G.z_limit * scale, 3), sentence: sentence,
      condition: base.condition, min_detectable_pp: pyRound(mdd, 3)
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

  QJ.admissibleHalfWidth = admissibleHalfWidth;
  QJ.checkText = checkText;
  QJ.curvePct = curvePct;
  QJ.extrapolationDoublings = extrapolationDoublings;
  QJ.floorPp = floorPp;
  QJ.get = get;
  QJ.grade = grade;
  QJ.gradePoint = gradePoint;
  QJ.hypot = hypot;
  QJ.majorMinor = majorMinor;
  QJ.nextAfter = nextAfter;
  QJ.normaliseArch = normaliseArch;
  QJ.number = number;
  QJ.parameterVariance = parameterVariance;
  QJ.placeOnPlot = placeOnPlot;
  QJ.predictGroup = predictGroup;
  QJ.resolveWithCode = resolveWithCode;
  QJ.softwareDiffers = softwareDiffers;
  QJ.split = split;
  QJ.textOf = textOf;
  QJ.trialsOf = trialsOf;
  QJ.twoProduct = twoProduct;
  QJ.twoSum = twoSum;
  QJ.ungraded = ungraded;
  QJ.uniqSorted = uniqSorted;
  QJ.verdict = verdict;
}(typeof window !== 'undefined' ? window : globalThis));
