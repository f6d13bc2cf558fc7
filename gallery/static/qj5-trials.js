/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * v2 consistency checks of schema/trials.py and validate(), the order schema/validate.py runs them in.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var arithmeticProblems = QJ.arithmeticProblems;
  var baselineProblems = QJ.baselineProblems;
  var coarseEnergyProblems = QJ.coarseEnergyProblems;
  var legacyEvidenceProblems = QJ.legacyEvidenceProblems;
  var recomputedProblems = QJ.recomputedProblems;
  var timestampProblems = QJ.timestampProblems;
  var fsum = QJ.fsum;
  var halfUnit = QJ.halfUnit;
  var has = QJ.has;
  var identityProblems = QJ.identityProblems;
  var jsType = QJ.jsType;
  var nonFinitePaths = QJ.nonFinitePaths;
  var num = QJ.num;
  var obj = QJ.obj;
  var pointer = QJ.pointer;
  var powerCapW = QJ.powerCapW;
  var problem = QJ.problem;
  var pyFixed = QJ.pyFixed;
  var pyG = QJ.pyG;
  var pyRepr = QJ.pyRepr;
  var pySum = QJ.pySum;
  var sourceProblems = QJ.sourceProblems;
  var structureProblems = QJ.structureProblems;
  var text = QJ.text;
  var valueProblems = QJ.valueProblems;
  var versionProblems = QJ.versionProblems;

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
    var broken = [];
    var measured = obj(report, 'results').basis === 'measured';
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
        if (measured && gap > L.COUNTER_TRACE_MAX_PCT) {
          broken.push([gap, problem(rules, 'QJ222', '/trials/' + k + '/trace_energy_j', 'trial ' + k + ': counter ' + pyG(counter) + ' J and trace ' + pyG(trace) + ' J differ by ' + pyFixed(gap, 2) + ' %, over ' + pyG(L.COUNTER_TRACE_MAX_PCT) + ' %')]);
        } else if (gap > threshold) {
          disagree.push([gap, problem(rules, 'QJ210', '/trials/' + k + '/trace_energy_j', 'trial ' + k + ': counter ' + pyG(counter) + ' J and trace ' + pyG(trace) + ' J differ by ' + pyFixed(gap, 2) + ' %, over ' + pyG(threshold) + ' %')]);
        }
      }
    });
    found = found.concat(worst(rules, timeBad), worst(rules, powerBad), worst(rules, disagree), worst(rules, broken));
    var reportedWorst = num(agreement, 'counter_vs_trace_max_pct');
    if (!disagree.length && !broken.length && reportedWorst !== null && reportedWorst > threshold) {
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

  /* schema.trials.condition_problems: the generation length the condition reads is the one the trials ran. */
  function conditionProblems(rules, ctx, report) {
    var protocol = obj(report, 'protocol');
    var found = [];
    var block = protocol.block_tokens;
    var stated = obj(report, 'measurement').tokens_per_run;
    var blockInt = typeof block === 'number' && ctx.isInt('/protocol/block_tokens');
    var statedInt = typeof stated === 'number' && ctx.isInt('/measurement/tokens_per_run');
    if (blockInt && statedInt && block !== stated) {
      found.push(problem(rules, 'QJ215', '/measurement/tokens_per_run', 'measurement.tokens_per_run is ' + stated + ' but protocol.block_tokens is ' + block));
    }
    var reps = protocol.iterations_per_trial;
    var workload = obj(report, 'workload');
    var batch = has(workload, 'batch_size') ? workload.batch_size : 1;
    var batchInt = has(workload, 'batch_size') ? (typeof batch === 'number' && ctx.isInt('/workload/batch_size')) : true;
    var repsInt = typeof reps === 'number' && ctx.isInt('/protocol/iterations_per_trial');
    if (!(blockInt && repsInt && batchInt && block > 0 && reps > 0 && batch > 0)) { return found; }
    var expected = reps * block * batch;
    var wrong = [];
    okTrials(report).forEach(function (pair) {
      var k = pair[0];
      var tokens = pair[1].tokens;
      if (typeof tokens === 'number' && ctx.isInt('/trials/' + k + '/tokens') && tokens !== expected) {
        wrong.push([Math.abs(tokens - expected), problem(rules, 'QJ215', '/trials/' + k + '/tokens', 'trial ' + k + ' holds ' + tokens + ' tokens but ' + reps + ' generations of ' + block + ' tokens x batch ' + batch + ' make ' + expected)]);
      }
    });
    return found.concat(worst(rules, wrong));
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
      var sources = sourceProblems(rules, report);
      found = found.concat(sources, arithmeticProblems(rules, ctx, report), valueProblems(rules, report),
        identityProblems(rules, report), baselineProblems(rules, report), coarseEnergyProblems(rules, ctx, report),
        timestampProblems(rules, report));
      if (!sources.length) { found = found.concat(legacyEvidenceProblems(rules, report)); }
      if (report.schema_version === rules.schema_v2) {
        found = found.concat(perTrialProblems(rules, report), totalsProblems(rules, ctx, report), statisticsProblems(rules, ctx, report),
          recomputedProblems(rules, ctx, report), armsProblems(rules, ctx, report), conditionProblems(rules, ctx, report));
      }
    }
    return sortProblems(found);
  }

  QJ.armsProblems = armsProblems;
  QJ.conditionProblems = conditionProblems;
  QJ.blockDeltas = blockDeltas;
  QJ.hasErrors = hasErrors;
  QJ.median = median;
  QJ.okTrials = okTrials;
  QJ.perTrialProblems = perTrialProblems;
  QJ.sortProblems = sortProblems;
  QJ.statisticsProblems = statisticsProblems;
  QJ.sumCheck = sumCheck;
  QJ.totalsProblems = totalsProblems;
  QJ.trialEnergy = trialEnergy;
  QJ.validate = validate;
  QJ.worst = worst;
}(typeof window !== 'undefined' ? window : globalThis));
