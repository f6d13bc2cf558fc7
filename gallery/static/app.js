/* quantjoule gallery index: the filterable, sortable, paginated table and the check-your-energy.json panel.
 * Every value from a submission is written with textContent, never as HTML. */
(function () {
  'use strict';
  var G = window.QJ_GALLERY;
  var C = window.QJ_CURVES;
  if (!G) { return; }

  var rows = G.rows.map(function (values, index) {
    var row = { _index: index };
    G.columns.forEach(function (name, i) { row[name] = values[i]; });
    return row;
  });
  var FILTERS = ['label', 'arch', 'precision', 'weights', 'backend', 'batch_size'];
  var NUMERIC = { obs_pct: 1, ci_low_pct: 1, ref_pct: 1, z: 1, params_b: 1, issue: 1 };
  var state = { sort: 'date', dir: -1, page: 0, size: 100, filters: {}, text: '' };
  var $ = function (id) { return document.getElementById(id); };

  function fmtSigned(v, digits) { return v === null || v === undefined ? '—' : (v >= 0 ? '+' : '') + v.toFixed(digits); }

  function populateFilters() {
    FILTERS.forEach(function (name) {
      var select = $('filter-' + name);
      var seen = {};
      rows.forEach(function (r) { seen[String(r[name])] = true; });
      Object.keys(seen).sort(function (a, b) {  // numbers (batch sizes) in numeric order, text as before
        var x = Number(a), y = Number(b);
        if (a !== '' && b !== '' && !isNaN(x) && !isNaN(y)) { return x - y; }
        return a < b ? -1 : (a > b ? 1 : 0);
      }).forEach(function (value) {
        var option = document.createElement('option');
        option.value = value;
        option.textContent = value;
        select.appendChild(option);
      });
      select.addEventListener('change', function () { state.filters[name] = select.value; state.page = 0; render(); });
    });
    $('filter-text').addEventListener('input', function () { state.text = this.value.toLowerCase(); state.page = 0; render(); });
    $('page-size').addEventListener('change', function () { state.size = parseInt(this.value, 10) || 0; state.page = 0; render(); });
    $('prev-page').addEventListener('click', function () { state.page = Math.max(0, state.page - 1); render(); });
    $('next-page').addEventListener('click', function () { state.page += 1; render(); });
    $('filters').addEventListener('submit', function (e) { e.preventDefault(); });
    Array.prototype.forEach.call(document.querySelectorAll('button.sort'), function (button) {
      button.addEventListener('click', function () {
        var key = button.getAttribute('data-sort');
        if (state.sort === key) { state.dir = -state.dir; } else { state.sort = key; state.dir = NUMERIC[key] ? -1 : 1; }
        state.page = 0;
        render();
      });
    });
  }

  function haystack(r) {
    return [r.model, r.card, r.submitter, r.handle, r.arch, r.precision, r.weights, r.label,
      (r.qualifiers || []).join(' '), r.issue === null ? '' : '#' + r.issue, r.date, r.condition || ''].join(' ').toLowerCase();
  }

  function matching() {
    return rows.filter(function (r) {
      for (var i = 0; i < FILTERS.length; i++) {
        var want = state.filters[FILTERS[i]];
        if (want && String(r[FILTERS[i]]) !== want) { return false; }
      }
      return !state.text || haystack(r).indexOf(state.text) !== -1;
    });
  }

  function compare(a, b) {
    var key = state.sort;
    var x = a[key];
    var y = b[key];
    var missingX = x === null || x === undefined || x === '';
    var missingY = y === null || y === undefined || y === '';
    if (missingX || missingY) {
      // Missing values always sort last, whichever the direction.
      if (missingX !== missingY) { return missingX ? 1 : -1; }
      return a._index - b._index;
    }
    var c = NUMERIC[key] ? x - y : String(x).localeCompare(String(y));
    // Ties keep the published order (newest first), so the table never sorts by verdict implicitly.
    return c !== 0 ? c * state.dir : a._index - b._index;
  }

  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) { td.className = cls; }
    tr.appendChild(td);
    return td;
  }

  function link(td, text, href) {
    td.textContent = '';
    var a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    td.appendChild(a);
  }

  function rowElement(r) {
    var tr = document.createElement('tr');
    tr.className = 'row row-' + r.label;
    tr.setAttribute('data-label', r.label);
    link(cell(tr, ''), r.date || '—', r.page);
    var verdict = cell(tr, '');
    var span = document.createElement('span');
    span.className = 'label label-' + r.label;
    span.textContent = r.label;
    verdict.appendChild(span);
    if (r.qualifiers && r.qualifiers.length) { verdict.appendChild(document.createTextNode(' ' + r.qualifiers.join(', '))); }
    cell(tr, fmtSigned(r.obs_pct, 1), 'num obs');
    cell(tr, r.ci_low_pct === null ? '—' : '[' + fmtSigned(r.ci_low_pct, 1) + ', ' + fmtSigned(r.ci_high_pct, 1) + ']', 'num');
    cell(tr, fmtSigned(r.ref_pct, 1), 'num');
    cell(tr, fmtSigned(r.z, 2), 'num');
    cell(tr, r.card || '—');
    cell(tr, r.arch);
    cell(tr, r.precision + (r.backend !== 'eager' ? ' (' + r.backend + ')' : '') +
      (r.batch_size > 1 ? ' · batch ' + r.batch_size : ''));
    link(cell(tr, ''), r.model || '—', r.page);
    cell(tr, r.params_b === null ? '—' : String(r.params_b), 'num');
    cell(tr, (r.weights || '—') + (r.legacy ? ' · legacy' : ''));
    cell(tr, r.submitter + (r.handle && r.handle !== r.submitter ? ' (' + r.handle + ')' : ''));
    var issue = cell(tr, '');
    if (r.issue_url) { link(issue, '#' + r.issue, r.issue_url); } else { issue.textContent = r.issue === null ? '—' : '#' + r.issue; }
    if (r.pr_url) {
      issue.appendChild(document.createTextNode(' · '));
      var a = document.createElement('a');
      a.href = r.pr_url;
      a.textContent = 'PR';
      issue.appendChild(a);
    }
    return tr;
  }

  function render() {
    var list = matching().sort(compare);
    var size = state.size > 0 ? state.size : list.length || 1;
    var pages = Math.max(1, Math.ceil(list.length / size));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * size;
    var shown = list.slice(start, start + size);
    var body = document.createDocumentFragment();
    shown.forEach(function (r) { body.appendChild(rowElement(r)); });
    var tbody = document.querySelector('#replications tbody');
    tbody.textContent = '';
    tbody.appendChild(body);
    $('table-status').textContent = list.length + ' of ' + rows.length + ' replication(s) match' +
      (list.length ? '; showing ' + (start + 1) + '–' + (start + shown.length) : '');
    $('page-info').textContent = 'page ' + (state.page + 1) + ' of ' + pages;
    $('prev-page').disabled = state.page === 0;
    $('next-page').disabled = state.page >= pages - 1;
    Array.prototype.forEach.call(document.querySelectorAll('#replications th'), function (th) {
      var key = th.querySelector('button').getAttribute('data-sort');
      if (key === state.sort) { th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending'); } else { th.removeAttribute('aria-sort'); }
    });
    document.body.setAttribute('data-table-ready', 'true');
  }

  populateFilters();
  render();
  if (window.QJ && window.QJ.mountPanel && C) { window.QJ.mountPanel(document, C, G); }
}());
