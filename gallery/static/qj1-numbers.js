/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * Numbers as Python computes and prints them: round(), format(), repr(), sum(), math.fsum.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};

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

  QJ.fsum = fsum;
  QJ.isNum = isNum;
  QJ.pyFixed = pyFixed;
  QJ.pyG = pyG;
  QJ.pyRepr = pyRepr;
  QJ.pyRound = pyRound;
  QJ.pySum = pySum;
}(typeof window !== 'undefined' ? window : globalThis));
