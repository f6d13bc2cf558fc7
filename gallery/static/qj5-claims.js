/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * schema/claims.py: stated precision of the energies (QJ219), a legacy measurement's evidence (QJ220 and
 * QJ205), a real timestamp (QJ221; the submission time is not known here, so only the date is checked).
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var writtenHalfUnit = QJ.writtenHalfUnit;
  var num = QJ.num;
  var obj = QJ.obj;
  var problem = QJ.problem;
  var pyFixed = QJ.pyFixed;
  var pyG = QJ.pyG;
  var pyRepr = QJ.pyRepr;
  var text = QJ.text;

  var TRIPLES = [
    ['energy_per_token_mj', 'fp16_energy_per_token_mj', 'vs_fp16_energy_pct'],
    ['dynamic_energy_per_token_mj', 'fp16_dynamic_energy_per_token_mj', 'vs_fp16_dynamic_energy_pct']
  ];

  function deltaWindow(q, f, dq, df) {
    return [((q - dq) / (f + df) - 1) * 100, ((q + dq) / Math.max(f - df, 1e-300) - 1) * 100];
  }

  function coarseEnergyProblems(rules, ctx, report) {
    var results = obj(report, 'results');
    var found = [];
    var v2 = report.schema_version === rules.schema_v2;
    TRIPLES.forEach(function (t) {
      var q = num(results, t[0]);
      var f = num(results, t[1]);
      if (q === null || f === null || q <= 0 || f <= 0 || num(results, t[2]) === null) { return; }
      var w = deltaWindow(q, f, writtenHalfUnit(rules, ctx, results[t[0]], '/results/' + t[0], v2), writtenHalfUnit(rules, ctx, results[t[1]], '/results/' + t[1], v2));
      if (w[1] - w[0] > rules.limits.MAX_DELTA_E_ROUNDING_PP) {
        found.push(problem(rules, 'QJ219', '/results/' + t[2], t[0] + ' ' + pyRepr(results[t[0]]) + ' and ' + t[1] + ' ' + pyRepr(results[t[1]]) +
          ' allow ' + t[2] + ' anywhere from ' + pyFixed(w[0], 2) + ' % to ' + pyFixed(w[1], 2) + ' %; at most ' + pyG(rules.limits.MAX_DELTA_E_ROUNDING_PP) + ' pp of rounding is accepted'));
      }
    });
    return found;
  }

  function legacyEvidenceProblems(rules, report) {
    var results = obj(report, 'results');
    if (report.schema_version === rules.schema_v2 || text(results, 'basis') !== 'measured' ||
        text(report, 'measurement_source') !== rules.nvml_source_legacy) { return []; }
    var found = [];
    var rate = num(obj(report, 'measurement'), 'sample_rate_hz');
    if (rate === null || rate <= 0) {
      found.push(problem(rules, 'QJ220', '/measurement/sample_rate_hz', 'a measured report sampled the power: measurement.sample_rate_hz must be above 0'));
    }
    var software = obj(report, 'software');
    if (!text(obj(software, 'packages'), 'torch').trim() || !text(software, 'nvidia_driver').trim()) {
      found.push(problem(rules, 'QJ220', '/software', 'a measured report names the software it ran on: software.packages.torch and software.nvidia_driver'));
    }
    var power = num(results, 'avg_power_watts');
    var tput = num(results, 'throughput_tokens_per_s');
    var total = num(results, 'total_energy_joules');
    var tokens = num(results, 'tokens_generated');
    if (power && tput && total && tokens && Math.min(power, tput, total, tokens) > 0) {
      var implied = power * tokens / tput;
      if (Math.abs(implied - total) > rules.limits.POWER_TIME_REL * total) {
        found.push(problem(rules, 'QJ205', '/results/avg_power_watts', 'avg_power_watts x tokens_generated / throughput_tokens_per_s is ' + pyG(implied, 4) + ' J but total_energy_joules is ' + pyG(total) + ' J'));
      }
    }
    return found;
  }

  /* schema.claims.parse_timestamp: YYYY-MM-DDThh:mm:ss[.fraction]Z naming a time that exists. */
  function validTimestamp(value) {
    var m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?Z$/.exec(value);
    if (!m) { return false; }
    var y = +m[1];
    var mo = +m[2];
    var d = +m[3];
    var leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
    var days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo - 1] && +m[4] <= 23 && +m[5] <= 59 && +m[6] <= 59;
  }

  function timestampProblems(rules, report) {
    var value = report.timestamp_utc;
    if (typeof value !== 'string' || validTimestamp(value)) { return []; }
    var shown = [...value].length <= 40 ? value : [...value].slice(0, 37).join('') + '...';
    return [problem(rules, 'QJ221', '/timestamp_utc', 'timestamp_utc ' + pyRepr(shown) + ' is not a valid UTC date and time')];
  }

  QJ.coarseEnergyProblems = coarseEnergyProblems;
  QJ.deltaWindow = deltaWindow;
  QJ.legacyEvidenceProblems = legacyEvidenceProblems;
  QJ.timestampProblems = timestampProblems;
  QJ.validTimestamp = validTimestamp;
}(typeof window !== 'undefined' ? window : globalThis));
