/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * schema/recompute.py: every stored summary figure recomputed from the trial records, within what the
 * rounding of the printed trial energies can explain (QJ213).
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var fsum = QJ.fsum;
  var halfUnit = QJ.halfUnit;
  var has = QJ.has;
  var jsType = QJ.jsType;
  var num = QJ.num;
  var obj = QJ.obj;
  var problem = QJ.problem;
  var pyG = QJ.pyG;
  var pyRepr = QJ.pyRepr;
  var text = QJ.text;

  var Z975 = 1.959963984540054;
  function t975(rules, dof) {
    if (dof <= rules.t975.length) { return rules.t975[dof - 1]; }
    var z = Z975;
    var v = dof;
    return z + (Math.pow(z, 3) + z) / (4 * v) + (5 * Math.pow(z, 5) + 16 * Math.pow(z, 3) + 3 * z) / (96 * v * v) +
      (3 * Math.pow(z, 7) + 19 * Math.pow(z, 5) + 17 * Math.pow(z, 3) - 15 * z) / (384 * v * v * v) +
      (79 * Math.pow(z, 9) + 776 * Math.pow(z, 7) + 1482 * Math.pow(z, 5) - 1920 * Math.pow(z, 3) - 945 * z) / (92160 * v * v * v * v);
  }
  function mean(xs) { return fsum(xs) / xs.length; }
  function median(xs) {
    var s = xs.slice().sort(function (a, b) { return a - b; });
    var n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
  function stdev(xs) {
    var m = mean(xs);
    return Math.sqrt(fsum(xs.map(function (x) { return (x - m) * (x - m); })) / (xs.length - 1));
  }

  function perToken(energy, tokens, shape, prefill) {
    if (shape === null) { return energy / tokens; }
    var perGen = energy / (tokens / (shape[0] * shape[2]));  // a generation decodes shape[2] sequences
    if (shape[0] === shape[1]) { return perGen / shape[1]; }
    var decode = (perGen - prefill) / (shape[0] - 1);
    return (prefill + (shape[1] - 1) * decode) / shape[1];
  }

  /* (ΔE%, largest move) over the corners of the rounding box, or null when it is unbounded. */
  function corners(quant, base, shape, pq, pf) {
    function delta(sq, sf, spq, spf) {
      var eq = perToken(quant[0] + sq * quant[1], quant[2], shape, pq[0] + spq * pq[1]);
      var ef = perToken(base[0] + sf * base[1], base[2], shape, pf[0] + spf * pf[1]);
      return [ef ? (eq / ef - 1) * 100 : Infinity, ef];
    }
    var nominal = delta(0, 0, 0, 0);
    if (!isFinite(nominal[0])) { return null; }
    var move = 0;
    for (var c = 0; c < 16; c++) {
      var d = delta(c & 1 ? 1 : -1, c & 2 ? 1 : -1, c & 4 ? 1 : -1, c & 8 ? 1 : -1);
      if (!isFinite(d[0]) || (d[1] > 0) !== (nominal[1] > 0)) { return null; }
      move = Math.max(move, Math.abs(d[0] - nominal[0]));
    }
    return [nominal[0], move];
  }

  function blockDeltas(ctx, report, precision, kind) {
    var shape = null;
    var prefill = {};
    if (kind === 'reconstructed') {
      var bt = num(obj(report, 'phases'), 'block_tokens') || num(obj(report, 'protocol'), 'block_tokens');
      var lt = num(obj(report, 'phases'), 'tokens') || num(obj(report, 'workload'), 'new_tokens');
      if (!bt || !lt || bt < 1) { return null; }
      if (bt !== lt) {
        if (bt < 2) { return null; }
        var arms = ['FP16', precision];
        for (var a = 0; a < arms.length; a++) {
          var v = num(obj(obj(report, 'arms'), arms[a]), 'prefill_energy_j');
          if (v === null) { return null; }
          prefill[arms[a]] = [v, halfUnit(ctx, obj(obj(report, 'arms'), arms[a]).prefill_energy_j, '/arms/' + arms[a] + '/prefill_energy_j')];
        }
      }
      shape = [bt, lt, num(obj(report, 'workload'), 'batch_size') || 1];
    }
    var perBlock = {};
    (Array.isArray(report.trials) ? report.trials : []).forEach(function (t, k) {
      if (jsType(t) !== 'object' || t.status !== 'ok' || (t.arm !== 'FP16' && t.arm !== precision)) { return; }
      var key = kind === 'dynamic' ? 'dynamic_energy_j' : (num(t, 'counter_energy_j') !== null ? 'counter_energy_j' : 'trace_energy_j');
      var energy = num(t, key);
      var tokens = num(t, 'tokens');
      var block = t.block;
      if (typeof block === 'number' && ctx.isInt('/trials/' + k + '/block') && energy !== null && tokens) {
        (perBlock[block] = perBlock[block] || {})[t.arm] = [energy, halfUnit(ctx, t[key], '/trials/' + k + '/' + key), tokens];
      }
    });
    var out = [];
    var blocks = Object.keys(perBlock).map(Number).sort(function (x, y) { return x - y; });
    for (var b = 0; b < blocks.length; b++) {
      var arm = perBlock[blocks[b]];
      if (!has(arm, precision) || !has(arm, 'FP16')) { continue; }
      var spread = corners(arm[precision], arm.FP16, shape, prefill[precision] || [0, 0], prefill.FP16 || [0, 0]);
      if (spread === null) { return null; }
      out.push([blocks[b], spread[0], spread[1]]);
    }
    return out;
  }

  function summaryProblems(rules, ctx, path, summary, deltas) {
    if (!deltas.length) { return []; }
    if (jsType(summary) !== 'object') {
      return [problem(rules, 'QJ213', path, path.slice(path.lastIndexOf('/') + 1) + ' is missing, but the trials give ' + deltas.length + ' paired blocks to summarise')];
    }
    var values = deltas.map(function (d) { return d[1]; });
    var moves = deltas.map(function (d) { return d[2]; });
    var n = values.length;
    var m = mean(values);
    var mtol = mean(moves);
    var expected = [['mean', m, mtol], ['median', median(values), Math.max.apply(null, moves)]];
    if (n >= 2) {
      var sd = stdev(values);
      var sdTol = Math.sqrt(fsum(moves.map(function (x) { return x * x; })) / (n - 1));
      var half = t975(rules, n - 1) * sd / Math.sqrt(n);
      var halfTol = t975(rules, n - 1) * sdTol / Math.sqrt(n);
      expected.push(['sd', sd, sdTol], ['ci95_half_width_pp', half, halfTol], ['ci95_low', m - half, mtol + halfTol], ['ci95_high', m + half, mtol + halfTol]);
      if (Math.abs(m) > mtol) {
        var low = Math.max(sd - sdTol, 0) / (Math.abs(m) + mtol);
        var high = (sd + sdTol) / (Math.abs(m) - mtol);
        expected.push(['cv', (low + high) / 2, (high - low) / 2]);
      }
    }
    var found = [];
    expected.forEach(function (e) {
      var where = path + '/' + e[0];
      var reported = num(summary, e[0]);
      if (reported === null) {
        found.push(problem(rules, 'QJ213', where, e[0] + ' is missing, but the trials give ' + pyG(e[1], 4)));
        return;
      }
      var slack = e[2] + halfUnit(ctx, summary[e[0]], where) + rules.limits.STATS_SLACK_REL * Math.abs(e[1]) + 1e-9;
      if (Math.abs(reported - e[1]) > slack) {
        found.push(problem(rules, 'QJ213', where, e[0] + ' is ' + pyG(reported) + ' but the paired trials give ' + pyG(e[1], 4) + ' (rounding allows ' + pyG(slack, 2) + ')'));
      }
    });
    return found;
  }

  function directProblems(rules, ctx, phases, precision) {
    if (!has(phases, 'direct_check_delta_e_pct') || phases.direct_check_delta_e_pct === null) { return []; }
    var direct = obj(phases, 'direct_check');
    var qb = obj(direct, precision);
    var fb = obj(direct, 'FP16');
    var q = num(qb, 'energy_per_token_mj');
    var f = num(fb, 'energy_per_token_mj');
    var value = num(phases, 'direct_check_delta_e_pct');
    if (q === null || f === null || f <= 0 || value === null) {
      return [problem(rules, 'QJ213', '/phases/direct_check_delta_e_pct', 'the direct-check dE% has no direct_check energies of both arms to check it by')];
    }
    var dq = halfUnit(ctx, qb.energy_per_token_mj, '/phases/direct_check/' + precision + '/energy_per_token_mj');
    var df = halfUnit(ctx, fb.energy_per_token_mj, '/phases/direct_check/FP16/energy_per_token_mj');
    var low = ((q - dq) / (f + df) - 1) * 100;
    var high = ((q + dq) / Math.max(f - df, 1e-300) - 1) * 100;
    var slack = halfUnit(ctx, phases.direct_check_delta_e_pct, '/phases/direct_check_delta_e_pct') + rules.limits.STATS_SLACK_REL * Math.abs(value) + 1e-9;
    if (!(value <= high + slack && low <= value + slack)) {
      return [problem(rules, 'QJ213', '/phases/direct_check_delta_e_pct', 'direct_check_delta_e_pct is ' + pyG(value) + ' but the direct energies give ' + pyG((q / f - 1) * 100, 4))];
    }
    return [];
  }

  function phasesProblems(rules, ctx, report, precision) {
    var phases = obj(report, 'phases');
    var found = [];
    var stored = has(phases, 'reconstructed_delta_e_pct') ? phases.reconstructed_delta_e_pct : null;
    var listed = has(phases, 'per_block_reconstructed_delta_e_pct') ? phases.per_block_reconstructed_delta_e_pct : null;
    if (stored !== null || listed !== null) {
      var deltas = blockDeltas(ctx, report, precision, 'reconstructed');
      if (deltas === null) {
        return [problem(rules, 'QJ213', '/phases/reconstructed_delta_e_pct', "the reconstructed dE% cannot be recomputed: the report lacks the block and generation lengths or the arms' prefill_energy_j")];
      }
      if (stored !== null) { found = found.concat(summaryProblems(rules, ctx, '/phases/reconstructed_delta_e_pct', stored, deltas)); }
      if (Array.isArray(listed)) {
        if (listed.length !== deltas.length) {
          found.push(problem(rules, 'QJ213', '/phases/per_block_reconstructed_delta_e_pct', listed.length + ' values but the trials hold ' + deltas.length + ' paired blocks'));
        } else {
          for (var i = 0; i < listed.length; i++) {
            var v = listed[i];
            var d = deltas[i];
            if (typeof v !== 'number' || Math.abs(v - d[1]) > d[2] + halfUnit(ctx, v, '/phases/per_block_reconstructed_delta_e_pct/' + i) + rules.limits.STATS_SLACK_REL * Math.abs(d[1]) + 1e-9) {
              found.push(problem(rules, 'QJ213', '/phases/per_block_reconstructed_delta_e_pct/' + i, 'block value ' + pyRepr(v) + ' but the trials give ' + pyG(d[1], 4)));
              break;
            }
          }
        }
      }
    }
    return found.concat(directProblems(rules, ctx, phases, precision));
  }

  /* schema.recompute.recomputed_problems */
  function recomputedProblems(rules, ctx, report) {
    var precision = text(obj(report, 'workload'), 'precision');
    var stats = report.statistics;
    if (precision === '' || precision === 'FP16' || jsType(stats) !== 'object') { return []; }
    var found = summaryProblems(rules, ctx, '/statistics/delta_e_pct', has(stats, 'delta_e_pct') ? stats.delta_e_pct : null,
      blockDeltas(ctx, report, precision, 'total') || []);
    var dynamic = blockDeltas(ctx, report, precision, 'dynamic');
    if (has(stats, 'dynamic_delta_e_pct') && stats.dynamic_delta_e_pct !== null && dynamic && dynamic.length) {
      found = found.concat(summaryProblems(rules, ctx, '/statistics/dynamic_delta_e_pct', stats.dynamic_delta_e_pct, dynamic));
    }
    return found.concat(phasesProblems(rules, ctx, report, precision));
  }

  QJ.recomputedProblems = recomputedProblems;
  QJ.t975 = t975;
}(typeof window !== 'undefined' ? window : globalThis));
