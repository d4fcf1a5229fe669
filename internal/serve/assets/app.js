(function () {
  'use strict';
  // Errors and blocked requests are recorded on <html data-errors> by the
  // page shell's error trap (report.ErrorTrap), which runs first.
  var root = document.documentElement;

  var SVGNS = 'http://www.w3.org/2000/svg';
  var COLORS = ['#3465a4', '#e07b00', '#2e9e6b', '#9c3fb5', '#b8860b', '#c0392b', '#16a085', '#7f8c8d'];
  function el(tag, attrs, kids) { var n = document.createElement(tag); set(n, attrs); add(n, kids); return n; }
  function sv(tag, attrs, kids) { var n = document.createElementNS(SVGNS, tag); set(n, attrs); add(n, kids); return n; }
  function set(n, attrs) {
    for (var k in attrs || {}) if (attrs[k] !== null && attrs[k] !== undefined) n.setAttribute(k, attrs[k]);
  }
  function add(n, kids) {
    if (kids === null || kids === undefined) return;
    if (!Array.isArray(kids)) kids = [kids];
    kids.forEach(function (k) {
      if (k === null || k === undefined) return;
      n.appendChild(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
    });
  }
  function num(v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
    if (a === 0) return '0';
    return String(+v.toPrecision(3));
  }
  function pct(v) { return (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(v).toFixed(1) + '%'; }
  function day(t) { return t ? String(t).replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC') : '–'; }
  function shortID(id) { return id ? id.slice(0, 12) : ''; }
  function link(path, q, text) {
    var ps = [];
    Object.keys(q).forEach(function (k) {
      [].concat(q[k]).forEach(function (v) { if (v !== '' && v !== undefined && v !== null) ps.push(encodeURIComponent(k) + '=' + encodeURIComponent(v)); });
    });
    return el('a', { href: path + (ps.length ? '?' + ps.join('&') : '') }, text);
  }
  function table(id, head, rows) {
    return el('table', { id: id, 'class': 'grid' }, [
      el('thead', null, el('tr', null, head.map(function (h) { return el('th', null, h); }))),
      el('tbody', null, rows)]);
  }
  function form(path, fields) {
    return el('form', { method: 'get', action: path, 'class': 'sel' }, fields.concat([el('button', null, 'show')]));
  }
  function select(name, values, cur, blank) {
    var opts = blank ? [el('option', { value: '' }, blank)] : [];
    if (cur && values.indexOf(cur) < 0) values = [cur].concat(values);
    values.forEach(function (v) {
      opts.push(el('option', { value: v, selected: v === cur ? 'selected' : null }, v));
    });
    return el('label', null, [name + ' ', el('select', { name: name }, opts)]);
  }
  function input(name, value, size) { return el('label', null, [name + ' ', el('input', { name: name, value: value || '', size: size || 12 })]); }
  function uniq(xs) { var s = {}; return xs.filter(function (x) { if (s[x]) return false; s[x] = 1; return true; }); }

  var doc = JSON.parse(document.getElementById('perflab-data').textContent);
  var app = document.getElementById('app');
  var d = doc.data;
  var charts = 0;

  var views = {
    hosts: function () {
      var ix = d.index || {};
      app.appendChild(form('/', [input('host', d.host), select('probe', d.probes, d.probe, '(any)'),
        select('verdict', ['worse', 'better', 'same', 'equivalent', 'inconclusive', 'pending', 'none'], d.verdict, '(any)'),
        input('label', d.label), select('sort', ['worst', 'name'], d.sort), input('workload', d.workload === 'general' ? '' : d.workload),
        input('per', String(d.per_page), 4)]));
      if (ix.loaded === false) {
        // A console's first start reads the store's hosts (a pass over every run) in the background.
        app.appendChild(el('p', { id: 'count' }, 'Reading the store’s hosts (a pass over every run: about a second on a million runs); this page reloads itself.'));
        setTimeout(function () { location.reload(); }, 1000);
        return;
      }
      var first = d.page * d.per_page;
      app.appendChild(el('p', { id: 'count' }, d.total + ' host' + (d.total === 1 ? '' : 's') + ' match' + (d.total === 1 ? 'es' : '') +
        (d.total ? '; showing ' + (first + 1) + '–' + (first + d.hosts.length) : '') + (d.sort === 'worst' ? ', worst first' : ', by name') + '.' +
        (ix.pending ? ' ' + ix.pending + ' of the store’s verdicts and audits are still being computed: the order may change (every verdict shown is computed).' : '')));
      app.appendChild(el('p', null, 'Failing findings are for workload ' + d.workload + '. Last run: each probe’s newest run against the run before it, decided as perflab compare decides (run level, calibrated by the host’s earlier runs; first metric of the probe); its history shows the change points.'));
      var rows = d.hosts.map(function (h) {
        var s = h.snapshot || {};
        var sev = h.failing_by_severity || {};
        var fail = ['critical', 'high', 'medium', 'low'].filter(function (k) { return sev[k]; })
          .map(function (k) { return el('span', { 'class': 'sev ' + k }, sev[k] + ' ' + k); });
        var drift = h.drift.map(function (x) {
          var ci = x.delta_lo_pct === null ? '' : ' [' + pct(x.delta_lo_pct) + ', ' + pct(x.delta_hi_pct) + ']';
          return el('div', { 'class': 'drift ' + (x.verdict === 'worse' || x.verdict === 'better' ? x.verdict : 'flat'), title: x.reason || '' }, [
            x.probe + ' ' + (x.delta_pct === null ? '' : pct(x.delta_pct) + ci + ' ') + x.verdict + (x.host_drift ? ' (host drift)' : '') + ' ',
            link('/history', { probe: x.probe, host: h.host, metric: x.metric }, 'change points')]);
        }).concat((h.pending_probes || []).map(function (p) {
          return el('div', { 'class': 'drift flat pending' }, p + ' verdict being computed (refresh)');
        }));
        return el('tr', { 'data-host': h.host }, [
          el('td', null, link('/history', { host: h.host }, h.host)),
          el('td', null, s.kernel || '–'), el('td', null, s.cpu ? s.cpu + ' ×' + s.threads : '–'),
          el('td', null, s.memory_gib ? s.memory_gib + ' GiB' : '–'),
          el('td', null, fail.length ? fail : (h.audit_pending ? 'being computed (refresh)' : h.snapshot ? 'none' : 'no snapshot')),
          el('td', null, day(h.last_run)), el('td', null, link('/runs', { host: h.host }, String(h.runs))),
          el('td', null, drift.length ? drift : '–'),
          el('td', null, [link('/audit', { host: h.host }, 'audit'), ' ', link('/snapshots', { host: h.host }, 'snapshots'), ' ',
            link('/compare', { s: ['host:' + h.host] }, 'compare')])]);
      });
      app.appendChild(table('hosts', ['host', 'kernel', 'CPU', 'memory', 'failing findings', 'last run', 'runs', 'drift', ''], rows));
      var q = { host: d.host, probe: d.probe, verdict: d.verdict, label: d.label, sort: d.sort === 'worst' ? '' : d.sort,
        workload: d.workload === 'general' ? '' : d.workload, per: d.per_page === 50 ? '' : d.per_page };
      var pager = el('p', { id: 'pager' });
      if (d.page > 0) { q.page = d.page - 1; add(pager, [link('/', q, '← previous'), ' ']); }
      if (first + d.hosts.length < d.total) { q.page = d.page + 1; add(pager, link('/', q, 'next →')); }
      app.appendChild(pager);
    },

    history: function () {
      var probes = uniq(d.choices.map(function (c) { return c.probe; }));
      var hosts = uniq(d.choices.filter(function (c) { return !d.probe || c.probe === d.probe; }).map(function (c) { return c.host; }));
      var hostBoxes = hosts.map(function (h) {
        return el('label', null, [el('input', { type: 'checkbox', name: 'host', value: h, checked: d.hosts.indexOf(h) >= 0 ? 'checked' : null }), h]);
      });
      app.appendChild(form('/history', [select('probe', probes, d.probe, '(choose)'), select('metric', d.metrics, d.metric, d.metrics.length ? null : '(first)'),
        el('span', { 'class': 'hosts' }, hostBoxes), input('from', d.from, 18), input('to', d.to, 18), input('n', String(d.n), 4)]));
      if (!d.probe) { app.appendChild(el('p', null, 'Choose a probe.')); return; }
      if (!d.series.length) { app.appendChild(el('p', { id: 'empty' }, 'No runs of ' + d.probe + ' ' + d.metric + ' in this range.')); return; }
      app.appendChild(historyChart(d.series));
      app.appendChild(el('p', { 'class': 'note' }, 'Each point is a run’s median with the 95% interval of that median (the spread within the run, not between runs). Dashed lines are change points (' + d.method.name + '). Drag across the chart to zoom.'));
      var crow = [];
      d.series.forEach(function (s, si) {
        s.changes.forEach(function (c) {
          var st = c.settings.length ? c.settings.slice(0, 12).map(function (x) { return el('div', null, x.path + ': ' + x.before + ' → ' + x.after); })
            : (c.no_snapshot ? 'snapshot of run ' + shortID(c.no_snapshot) + ' not stored' : 'no setting changed');
          crow.push(el('tr', { 'data-change': s.host }, [el('td', null, el('span', { 'class': 'swatch', style: 'background:' + COLORS[si % COLORS.length] }, '')),
            el('td', null, s.host), el('td', null, day(s.points[c.change_point.index].started)),
            el('td', null, num(c.change_point.before) + ' → ' + num(c.change_point.after) + ' ' + s.unit),
            el('td', null, st)]));
        });
      });
      app.appendChild(el('h2', null, 'Change points'));
      app.appendChild(crow.length ? table('changes', ['', 'host', 'at', 'mean', 'settings that changed'], crow) : el('p', { id: 'changes' }, 'None found.'));
    },

    runs: function () {
      var f = d.filter;
      app.appendChild(form('/runs', [input('host', f.Host), input('probe', f.Probe), input('label', f.Label)]));
      app.appendChild(el('p', null, d.more ? 'more than ' + d.total + ' runs; page ' + (d.page + 1) :
        d.total + ' runs; page ' + (d.page + 1) + ' of ' + Math.max(1, Math.ceil(d.total / d.per_page))));
      app.appendChild(table('runs', ['id', 'started', 'host', 'probe', 'label', 'complete', ''], d.runs.map(function (r) {
        return el('tr', { 'data-run': r.id }, [el('td', { 'class': 'mono' }, shortID(r.id)), el('td', null, day(r.started)), el('td', null, r.host),
          el('td', null, r.probe), el('td', null, r.label || ''), el('td', null, r.complete ? 'yes' : 'no'),
          el('td', null, link('/history', { probe: r.probe, host: r.host }, 'history'))]);
      })));
      var q = { host: f.Host, probe: f.Probe, label: f.Label, per: d.per_page };
      var nav = el('p', null);
      if (d.page > 0) { q.page = d.page - 1; add(nav, [link('/runs', q, '← newer'), ' ']); }
      if ((d.page + 1) * d.per_page < d.total) { q.page = d.page + 1; add(nav, link('/runs', q, 'older →')); }
      app.appendChild(nav);
    },

    compare: function () {
      app.appendChild(el('p', null, 'Name two or more sides above: a label (all its runs), a run id or prefix, or host:NAME (the newest run of each probe on the host; probe narrows it). The comparison is perflab compare’s.'));
    },

    audit: function () {
      app.appendChild(form('/audit', [select('host', d.hosts.map(function (h) { return h.host; }), d.host, '(choose)'),
        select('snapshot', (d.snapshots || []).map(function (s) { return s.id; }), d.snapshot, '(newest)'), input('workload', d.workload)]));
      if (!d.summary) { app.appendChild(el('p', null, 'Choose a host.')); return; }
      var sev = d.summary.fail_by_severity;
      app.appendChild(el('p', { id: 'summary' }, 'Snapshot ' + shortID(d.snapshot) + ': ' + d.summary.fail + ' failing (' +
        ['critical', 'high', 'medium', 'low', 'info'].filter(function (k) { return sev[k]; }).map(function (k) { return sev[k] + ' ' + k; }).join(', ') +
        '), ' + d.summary.pass + ' pass, ' + d.summary.na + ' n/a.'));
      app.appendChild(table('findings', ['severity', 'status', 'rule', 'observed', 'expected', 'fix', 'revert'], d.findings.filter(function (f) { return f.status !== 'na'; }).map(function (f) {
        return el('tr', { 'data-rule': f.rule, 'class': f.status }, [el('td', { 'class': 'sev ' + f.severity }, f.severity), el('td', null, f.status),
          el('td', null, [el('b', null, f.title), el('div', { 'class': 'why' }, f.why)]), el('td', null, f.observed), el('td', null, f.expected),
          el('td', null, f.fix ? el('pre', null, f.fix) : ''), el('td', null, f.revert ? el('pre', null, f.revert) : '')]);
      })));
    },

    snapshots: function () {
      var ids = (d.snapshots || []).map(function (s) { return s.id; });
      app.appendChild(form('/snapshots', [select('host', d.hosts.map(function (h) { return h.host; }), d.host, '(choose)'),
        select('a', ids, d.a, '(older)'), select('b', ids, d.b, '(newer)')]));
      if (!d.a || !d.b) { app.appendChild(el('p', null, 'Choose a host with two snapshots, or two snapshots.')); return; }
      app.appendChild(el('p', { id: 'summary' }, d.diffs.length + ' facts differ between ' + shortID(d.a) + ' and ' + shortID(d.b) + '.'));
      app.appendChild(table('diffs', ['fact', shortID(d.a), shortID(d.b)], d.diffs.map(function (x) {
        return el('tr', { 'data-path': x.path }, [el('td', { 'class': 'mono' }, x.path), el('td', null, x.before), el('td', null, x.after)]);
      })));
    },

    flame: function () {
      if (d.note) app.appendChild(el('p', { id: 'note' }, d.note));
      else if (!d.file) app.appendChild(el('p', null, d.files.length ? 'Choose a profile above.' : 'The flame directory holds no .folded files.'));
    }
  };

  // historyChart draws every series on one time axis: the run medians as
  // points joined by a line, each with its interval, and change points as
  // dashed verticals. Dragging selects a time range and navigates to it.
  function historyChart(series) {
    var W = 960, H = 360, L = 70, R = 16, T = 16, B = 40;
    var xs = [], ys = [];
    series.forEach(function (s) {
      s.points.forEach(function (p, i) {
        xs.push(Date.parse(p.started)); ys.push(p.value);
        var ci = s.ci[i]; if (ci) { ys.push(ci[0]); ys.push(ci[1]); }
      });
    });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    if (x1 === x0) { x0 -= 3600e3; x1 += 3600e3; }
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    var pad = (y1 - y0) * 0.08 || Math.abs(y1) * 0.05 || 1; y0 -= pad; y1 += pad;
    function X(t) { return L + (t - x0) / (x1 - x0) * (W - L - R); }
    function Y(v) { return T + (1 - (v - y0) / (y1 - y0)) * (H - T - B); }
    var svg = sv('svg', { 'class': 'chart history', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, 'data-series': series.length });
    for (var i = 0; i <= 4; i++) {
      var v = y0 + (y1 - y0) * i / 4;
      svg.appendChild(sv('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), 'class': 'grid' }));
      svg.appendChild(sv('text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end' }, num(v)));
      var t = x0 + (x1 - x0) * i / 4;
      svg.appendChild(sv('text', { x: X(t), y: H - B + 16, 'text-anchor': 'middle' }, new Date(t).toISOString().slice(0, 16).replace('T', ' ')));
    }
    svg.appendChild(sv('text', { x: 4, y: 12 }, series[0].unit + (series[0].better ? ' (' + series[0].better + ' is better)' : '')));
    series.forEach(function (s, si) {
      var c = COLORS[si % COLORS.length];
      var g = sv('g', { 'class': 'series', 'data-host': s.host, fill: c, stroke: c });
      var path = s.points.map(function (p, i) { return (i ? 'L' : 'M') + X(Date.parse(p.started)).toFixed(1) + ' ' + Y(p.value).toFixed(1); }).join(' ');
      g.appendChild(sv('path', { d: path, fill: 'none', 'stroke-width': 1.5 }));
      s.points.forEach(function (p, i) {
        var x = X(Date.parse(p.started)), ci = s.ci[i];
        if (ci) g.appendChild(sv('line', { x1: x, x2: x, y1: Y(ci[0]), y2: Y(ci[1]), 'class': 'ci' }));
        g.appendChild(sv('circle', { cx: x, cy: Y(p.value), r: 2.5, 'class': 'run', 'data-run': p.run_id },
          sv('title', null, s.host + ' ' + day(p.started) + ': ' + num(p.value) + ' ' + s.unit + (ci ? ' [' + num(ci[0]) + ', ' + num(ci[1]) + ']' : '') + ' run ' + shortID(p.run_id))));
      });
      s.changes.forEach(function (ch) {
        var a = Date.parse(s.points[ch.change_point.index - 1].started), b = Date.parse(s.points[ch.change_point.index].started);
        var x = X((a + b) / 2);
        g.appendChild(sv('line', { x1: x, x2: x, y1: T, y2: H - B, 'class': 'change', 'data-host': s.host },
          sv('title', null, 'change point: ' + (ch.settings.length ? ch.settings.slice(0, 8).map(function (d) { return d.path + ' ' + d.before + '→' + d.after; }).join('; ') : 'no setting changed'))));
      });
      svg.appendChild(g);
      svg.appendChild(sv('text', { x: W - R - 4, y: T + 14 + 14 * si, 'text-anchor': 'end', fill: c }, s.host + (s.params ? ' ' + s.params : '')));
    });
    var brush = sv('rect', { y: T, height: H - T - B, width: 0, 'class': 'brush' });
    svg.appendChild(brush);
    var start = null;
    function tAt(ev) { var r = svg.getBoundingClientRect(); return x0 + ((ev.clientX - r.left) * W / r.width - L) / (W - L - R) * (x1 - x0); }
    svg.addEventListener('mousedown', function (ev) { start = tAt(ev); });
    svg.addEventListener('mousemove', function (ev) {
      if (start === null) return;
      var a = X(Math.min(start, tAt(ev))), b = X(Math.max(start, tAt(ev)));
      set(brush, { x: a, width: b - a });
    });
    svg.addEventListener('mouseup', function (ev) {
      var a = Math.min(start, tAt(ev)), b = Math.max(start, tAt(ev)); start = null;
      if (b - a < (x1 - x0) / 100) return;
      var q = new URLSearchParams(location.search);
      q.set('from', new Date(a).toISOString().slice(0, 19) + 'Z'); q.set('to', new Date(b).toISOString().slice(0, 19) + 'Z');
      location.search = q.toString();
    });
    charts++;
    return svg;
  }

  (views[doc.view] || function () { console.error('unknown view ' + doc.view); })();
  root.setAttribute('data-charts', String(charts));
  root.setAttribute('data-rendered', '1');
})();
