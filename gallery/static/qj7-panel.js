/* quantjoule in the browser, part of the port of the bot's checker (load the qj*.js files in order).
 * The check-your-energy.json panel: a dropped, chosen or pasted file is checked in the page; nothing is uploaded.
 * The numbers it needs come from data/rules.js and data/curves.js, generated from the Python packages. */
(function (root) {
  'use strict';
  var QJ = root.QJ = root.QJ || {};
  var checkText = QJ.checkText;
  var placeOnPlot = QJ.placeOnPlot;
  var pyFixed = QJ.pyFixed;

  function el(doc, tag, text, cls) {
    var node = doc.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function fmt(v, d, sign) { return v === null || v === undefined ? '—' : pyFixed(v, d, sign); }

  /* Why a verdict's condition text ("static, batch 8, 256-token generations") is not what the size plots
     draw, or null when it is (batch 1 and whole 256-token generations, or not stated). */
  function offSizePlot(condition) {
    var text = String(condition || '');
    var batch = /batch (\d+)/.exec(text);
    var tokens = /(\d+)-token generations/.exec(text);
    if (batch && batch[1] !== '1') { return 'it is batch ' + batch[1] + ' and the size plots are batch 1 (see the ΔE% against batch plot)'; }
    if (tokens && tokens[1] !== '256') { return 'it measured ' + tokens[1] + '-token generations and the plots draw whole 256-token ones only'; }
    return null;
  }

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
          ['detectable difference (pp)', fmt(v.min_detectable_pp, 1)], ['condition', v.condition || '—'],
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
    var off = offSizePlot(v.condition);
    if (off) {
      // the size plots draw batch 1, whole 256-token generations (gallery.plots.drawn): a ring there would
      // read as a point on a curve it was never measured against
      plotSlot.appendChild(el(doc, 'p', 'Your report is not placed on the plots: ' + off + '.', 'note'));
      return;
    }
    var name = String(v.arch) + '-' + String(v.precision);
    var geom = gallery.plots[name];
    var original = doc.getElementById('plot-' + name);
    if (!geom || !original) { return; }
    var figure = original.cloneNode(true);
    figure.id = 'check-figure';
    var spot = placeOnPlot(geom, v.params_b, v.obs_pct);
    var svg = figure.querySelector('svg.overlay');
    var circle = doc.createElementNS('http://www.w3.org/2000/svg', 'circle');
    // the ring takes the verdict's colour (the gallery's markers' colours), so it reads at a glance
    var label = ['confirmation', 'contradiction', 'ungraded'].indexOf(v.label) !== -1 ? v.label : 'ungraded';
    circle.setAttribute('class', 'you you-' + label + (spot.clipped ? ' clipped' : ''));
    circle.setAttribute('data-label', label);
    circle.setAttribute('cx', (spot.left * geom.size_px[0] / 100).toFixed(1));
    circle.setAttribute('cy', (spot.top * geom.size_px[1] / 100).toFixed(1));
    circle.setAttribute('r', '11');
    svg.appendChild(circle);
    var caption = figure.querySelector('figcaption');
    caption.textContent = 'Your point (ringed, ' + label + ') on the ' + name + ' plot' + (spot.clipped ? ', outside the plotted range and shown at its edge' : '') + '.';
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

  QJ.el = el;
  QJ.fmt = fmt;
  QJ.mountPanel = mountPanel;
  QJ.showResult = showResult;
  QJ.offSizePlot = offSizePlot;
}(typeof window !== 'undefined' ? window : globalThis));
