(function () {
  'use strict';
  // Errors and blocked requests are recorded on <html data-errors> by the
  // page shell's error trap (report.ErrorTrap), which runs first.
  var root = document.documentElement;

  var SVGNS = 'http://www.w3.org/2000/svg';
  var COLORS = ['#3465a4', '#e07b00', '#2e9e6b', '#9c3fb5', '#b8860b'];

  function el(tag, attrs, kids) {
    var n = document.createElement(tag);
    setAttrs(n, attrs);
    append(n, kids);
    return n;
  }
  function sv(tag, attrs, kids) {
    var n = document.createElementNS(SVGNS, tag);
    setAttrs(n, attrs);
    append(n, kids);
    return n;
  }
  function setAttrs(n, attrs) {
    for (var k in attrs || {}) {
      if (attrs[k] !== null && attrs[k] !== undefined) n.setAttribute(k, attrs[k]);
    }
  }
  function append(n, kids) {
    if (kids === undefined || kids === null) return;
    if (!Array.isArray(kids)) kids = [kids];
    kids.forEach(function (k) {
      if (k === null || k === undefined) return;
      n.appendChild(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
    });
  }
  function color(i) { return COLORS[i % COLORS.length]; }

  // num formats an axis value with about three significant digits.
  function num(v, prec) {
    prec = prec || 3;
    if (v === null || !isFinite(v)) return '–';
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(prec) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(prec) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(prec) + 'k';
    if (a === 0) return '0';
    return String(+v.toPrecision(prec));
  }
  function timeNum(v, prec) {
    var a = Math.abs(v);
    if (a === 0) return '0';
    if (a < 1e-6) return num(v * 1e9, prec) + 'ns';
    if (a < 1e-3) return num(v * 1e6, prec) + 'µs';
    if (a < 1) return num(v * 1e3, prec) + 'ms';
    return num(v, prec) + 's';
  }
  // tickLabels raises the precision until neighbouring ticks differ.
  function tickLabels(ts, fmt) {
    for (var prec = 3; prec < 8; prec++) {
      var out = ts.map(function (t) { return fmt(t, prec); });
      var unique = out.every(function (l, i) { return i === 0 || l !== out[i - 1]; });
      if (unique) return out;
    }
    return out;
  }
  function axisFmt(unit) { return unit === 'sec/op' || unit === 's' ? timeNum : num; }
  function bytes(v) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return +v.toPrecision(3) + u[i];
  }
  function xFmt(xunit) { return /^(b|bytes?)$/i.test(xunit || '') ? bytes : num; }

  function ticks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    if (err >= 5) step *= 5; else if (err >= 2) step *= 2;
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(t);
    return out;
  }

  function verdictClass(v) { return v || ''; }

  function render(d) {
    var app = document.getElementById('app');
    var rep = d.report;
    var sides = rep.sides;
    app.appendChild(el('h1', null, d.title));
    app.appendChild(el('p', { class: 'sub' }, sides.map(function (s) {
      return s.name + ': ' + s.run_ids.length + ' run(s) on ' + (s.hosts.join(', ') || '?') + ' (' + s.probes.join(', ') + ')';
    }).join(' · ')));
    app.appendChild(legend(sides));

    if (rep.notes.length) {
      app.appendChild(el('ul', { class: 'notes' }, rep.notes.map(function (n) { return el('li', null, n); })));
    }
    rep.pairs.forEach(function (p, pi) {
      var title = 'Likely causes' + (rep.pairs.length > 1 ? ' (' + sides[p.other].name + ')' : '');
      app.appendChild(el('h2', null, title));
      var causes = d.causes[pi] || [];
      if (!causes.length) {
        app.appendChild(el('p', { class: 'sub' }, 'No known setting differs between the sides.'));
      } else {
        app.appendChild(el('ol', { class: 'causes', id: 'causes-' + pi }, causes.map(function (c) {
          return el('li', { class: c.supported ? 'supported' : 'unsupported' },
            [el('div', null, c.head)].concat(c.detail.map(function (t) { return el('div', { class: 'detail' }, t); })));
        })));
      }
    });

    app.appendChild(el('h2', null, sides.length > 1 ? 'Side by side' : 'Results'));
    app.appendChild(sideBySide(d));
    rep.pairs.forEach(function (p) {
      var parts = [p.counts.better + ' better', p.counts.worse + ' worse', p.counts.same + ' same',
        p.counts.equivalent + ' equivalent', p.counts.inconclusive + ' inconclusive'];
      var geo = p.suites.map(function (s) {
        return 'geomean ' + s.suite + ': ' + (s.gain_pct === null ? '–' : (s.gain_pct >= 0 ? '+' : '') + s.gain_pct.toFixed(1) + '%');
      });
      app.appendChild(el('p', { class: 'sub' }, sides[p.other].name + ' vs ' + sides[0].name + ': ' + parts.join(', ') + (geo.length ? ' · ' + geo.join(' · ') : '')));
    });

    var curves = curveGroups(rep);
    if (curves.length) {
      app.appendChild(el('h2', null, 'Curves'));
      var cg = el('div', { class: 'charts curves' });
      curves.forEach(function (g) { cg.appendChild(curveChart(g, rep)); });
      app.appendChild(cg);
    }

    app.appendChild(el('h2', null, 'Metrics: medians, ' + Math.round(rep.confidence * 100) + '% intervals and samples'));
    var grid = el('div', { class: 'charts', id: 'metric-charts' });
    rep.metrics.forEach(function (m, i) { grid.appendChild(metricChart(m, i, d, rep)); });
    app.appendChild(grid);

    rep.pairs.forEach(function (p) {
      var vs = sides[p.other].name + ' vs ' + sides[0].name;
      if (p.monitor_diff.length) {
        app.appendChild(el('h2', null, 'Host activity during the runs (' + vs + ')'));
        app.appendChild(table(['series', sides[0].name, sides[p.other].name, 'notable'], p.monitor_diff.map(function (m) {
          return [m.field, num(m.base) + ' ' + m.unit, num(m.other) + ' ' + m.unit, m.notable ? 'yes' : ''];
        }), 'monitor'));
      }
      app.appendChild(el('h2', null, 'Configuration differences (' + vs + '): ' + p.config_diff.length));
      app.appendChild(table(['fact', sides[0].name, sides[p.other].name], p.config_diff.map(function (c) {
        return [el('code', null, c.path), c.before, c.after];
      }), 'config-diff'));
    });
    root.setAttribute('data-charts', String(document.querySelectorAll('svg.chart').length));
  }

  function legend(sides) {
    return el('div', { class: 'legend' }, sides.map(function (s, i) {
      return el('span', null, [el('i', { style: 'background:' + color(i) }), s.name]);
    }));
  }

  function table(head, rows, id) {
    return el('table', { id: id }, [
      el('thead', null, el('tr', null, head.map(function (h) { return el('th', null, h); }))),
      el('tbody', null, rows.map(function (r) { return el('tr', null, r.map(function (c) { return el('td', null, c); })); }))
    ]);
  }

  // sideBySide is the seed-004 table: grouped by suite, one column per
  // side, then the change and verdict (~= for equivalent results).
  function sideBySide(d) {
    var rep = d.report, sides = rep.sides;
    var head = ['test'];
    sides.forEach(function (s, i) {
      head.push(s.name);
      if (i > 0) head.push('Δ vs ' + sides[0].name, 'p', '');
    });
    var body = el('tbody');
    var suite = null;
    d.rows.forEach(function (r) {
      if (r.Suite !== suite) {
        suite = r.Suite;
        body.appendChild(el('tr', { class: 'group' }, el('td', { colspan: head.length }, suite)));
      }
      var tr = el('tr', { 'data-metric': r.Metric });
      tr.appendChild(el('td', null, r.Metric));
      r.Sides.forEach(function (s, i) {
        tr.appendChild(el('td', { class: 'num' }, s.Missing ? '–' : s.Median + ' ' + s.CI));
        if (i === 0) return;
        var dl = r.Deltas[i];
        if (!dl) { tr.appendChild(el('td', { colspan: 3 }, '–')); return; }
        tr.appendChild(el('td', { class: 'num ' + verdictClass(dl.Verdict) }, dl.Delta + ' ' + dl.CI));
        tr.appendChild(el('td', { class: 'num' }, dl.P));
        tr.appendChild(el('td', { class: 'verdict ' + verdictClass(dl.Verdict), title: dl.Note || dl.Verdict }, dl.Mark + (dl.Note ? ' (' + dl.Note + ')' : '')));
      });
      body.appendChild(tr);
    });
    return el('table', { id: 'side-by-side' }, [el('thead', null, el('tr', null, head.map(function (h) { return el('th', null, h); }))), body]);
  }

  // metricChart draws, per side, the samples as a jittered strip, the
  // median as a tick and the confidence interval as a whisker, on a shared
  // axis.
  function metricChart(m, idx, d, rep) {
    var W = 380, rowH = 34, top = 10, left = 64, right = 14, bottom = 26;
    var present = m.sides.map(function (s, i) { return s ? i : -1; }).filter(function (i) { return i >= 0; });
    var H = top + rowH * m.sides.length + bottom;
    var lo = Infinity, hi = -Infinity;
    m.sides.forEach(function (s) {
      if (!s) return;
      s.samples.forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
      [s.ci_lo, s.ci_hi].forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    });
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi === lo) { var pad = Math.abs(lo) * 0.01 || 1; lo -= pad; hi += pad; }
    var span = hi - lo; lo -= span * 0.05; hi += span * 0.05;
    var x = function (v) { return left + (v - lo) / (hi - lo) * (W - left - right); };
    var fmt = axisFmt(m.unit);
    var svg = sv('svg', { class: 'chart metric', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': m.metric });
    var ts = ticks(lo, hi, 4), labels = tickLabels(ts, fmt);
    ts.forEach(function (t, k) {
      svg.appendChild(sv('line', { class: 'grid', x1: x(t), x2: x(t), y1: top, y2: H - bottom }));
      svg.appendChild(sv('text', { x: x(t), y: H - 8, 'text-anchor': 'middle' }, labels[k]));
    });
    svg.appendChild(sv('line', { class: 'axis', x1: left, x2: W - right, y1: H - bottom, y2: H - bottom }));
    m.sides.forEach(function (s, i) {
      var cy = top + rowH * i + rowH / 2;
      svg.appendChild(sv('text', { x: left - 6, y: cy + 4, 'text-anchor': 'end' }, rep.sides[i].name.slice(0, 10)));
      if (!s) return;
      var c = color(i);
      s.samples.forEach(function (v, k) {
        if (v === null) return;
        var jitter = ((k * 7919) % 13 - 6) * 1.2; // deterministic, so reports diff cleanly
        svg.appendChild(sv('circle', { class: 'pt', cx: x(v), cy: cy + jitter, r: 2.5, fill: c }));
      });
      if (s.ci_lo !== null && s.ci_hi !== null) {
        svg.appendChild(sv('line', { class: 'ci', x1: x(s.ci_lo), x2: x(s.ci_hi), y1: cy, y2: cy, stroke: c }));
        [s.ci_lo, s.ci_hi].forEach(function (v) {
          svg.appendChild(sv('line', { class: 'ci', x1: x(v), x2: x(v), y1: cy - 6, y2: cy + 6, stroke: c }));
        });
      }
      if (s.median !== null) {
        svg.appendChild(sv('rect', { class: 'median', x: x(s.median) - 2, y: cy - 9, width: 4, height: 18, fill: c }));
      }
    });
    var caption = [m.probe + ' · ' + m.metric + ' (' + m.unit + ', ' + m.better + ' is better)'];
    rep.pairs.forEach(function (p) {
      var dl = d.rows[idx].Deltas[p.other];
      if (dl) caption.push(el('span', { class: verdictClass(dl.Verdict) }, ' ' + dl.Delta + ' ' + dl.Mark));
    });
    if (present.length === 0) caption.push(' (no samples)');
    return el('figure', { 'data-metric': m.metric }, [el('figcaption', null, caption), svg]);
  }

  // curveGroups collects metrics that are points of one curve (same probe
  // and series), such as memory latency over working-set sizes.
  function curveGroups(rep) {
    var groups = {}, order = [];
    rep.metrics.forEach(function (m, i) {
      if (!m.series) return;
      var k = m.probe + '\u0000' + m.series;
      if (!groups[k]) { groups[k] = { probe: m.probe, series: m.series, unit: m.unit, xunit: m.x_unit, points: [] }; order.push(k); }
      groups[k].points.push(i);
    });
    return order.map(function (k) { return groups[k]; }).filter(function (g) { return g.points.length >= 2; });
  }

  function curveChart(g, rep) {
    var W = 560, H = 300, left = 64, right = 16, top = 12, bottom = 40;
    var pts = g.points.map(function (i) { return rep.metrics[i]; }).filter(function (m) { return m.x > 0 || m.x === 0; });
    var xs = pts.map(function (m) { return m.x || 0; });
    var xmin = Math.min.apply(null, xs), xmax = Math.max.apply(null, xs);
    var logx = xmin > 0 && xmax / xmin > 20;
    var ymax = 0;
    pts.forEach(function (m) { m.sides.forEach(function (s) { if (s) { ymax = Math.max(ymax, s.ci_hi !== null ? s.ci_hi : s.median || 0, s.median || 0); } }); });
    if (!(ymax > 0)) ymax = 1;
    ymax *= 1.08;
    var fx = logx ? function (v) { return Math.log(v); } : function (v) { return v; };
    var x0 = fx(xmin), x1 = fx(xmax);
    if (x1 === x0) { x1 = x0 + 1; }
    var x = function (v) { return left + (fx(v) - x0) / (x1 - x0) * (W - left - right); };
    var y = function (v) { return top + (1 - v / ymax) * (H - top - bottom); };
    var svg = sv('svg', { class: 'chart curve', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': g.series });
    var yf = axisFmt(g.unit), xf = xFmt(g.xunit);
    var yts = ticks(0, ymax, 5), ylabels = tickLabels(yts, yf);
    yts.forEach(function (t, k) {
      svg.appendChild(sv('line', { class: 'grid', x1: left, x2: W - right, y1: y(t), y2: y(t) }));
      svg.appendChild(sv('text', { x: left - 6, y: y(t) + 4, 'text-anchor': 'end' }, ylabels[k]));
    });
    var labelled = {};
    xs.forEach(function (v) {
      var px = Math.round(x(v));
      if (labelled[Math.round(px / 40)]) return;
      labelled[Math.round(px / 40)] = true;
      svg.appendChild(sv('text', { x: px, y: H - bottom + 16, 'text-anchor': 'middle' }, xf(v)));
    });
    svg.appendChild(sv('line', { class: 'axis', x1: left, x2: W - right, y1: H - bottom, y2: H - bottom }));
    svg.appendChild(sv('line', { class: 'axis', x1: left, x2: left, y1: top, y2: H - bottom }));
    svg.appendChild(sv('text', { x: (left + W - right) / 2, y: H - 6, 'text-anchor': 'middle' }, (g.xunit || 'x') + (logx ? ' (log scale)' : '')));
    rep.sides.forEach(function (side, si) {
      var c = color(si), path = [];
      pts.forEach(function (m) {
        var s = m.sides[si];
        if (!s || s.median === null) return;
        var px = x(m.x || 0);
        path.push((path.length ? 'L' : 'M') + px.toFixed(1) + ' ' + y(s.median).toFixed(1));
        if (s.ci_lo !== null && s.ci_hi !== null) {
          svg.appendChild(sv('line', { class: 'ci', x1: px, x2: px, y1: y(s.ci_lo), y2: y(s.ci_hi), stroke: c }));
        }
        svg.appendChild(sv('circle', { class: 'median', cx: px, cy: y(s.median), r: 3, fill: c }));
      });
      if (path.length) svg.insertBefore(sv('path', { d: path.join(' '), fill: 'none', stroke: c, 'stroke-width': 1.5, 'data-side': side.name }), svg.firstChild);
    });
    return el('figure', { 'data-series': g.series }, [el('figcaption', null, g.probe + ' · ' + g.series + ' (' + g.unit + ') per side'), svg]);
  }

  try {
    render(JSON.parse(document.getElementById('perflab-data').textContent));
    root.setAttribute('data-rendered', '1');
  } catch (e) {
    console.error((e && e.stack) || e);
  }
})();
