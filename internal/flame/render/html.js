// perflab flame graph (HTML, canvas): hover for details, click to zoom,
// Reset, regex search with the matched share. Drawing is on a canvas so
// profiles with hundreds of thousands of frames stay responsive.
// window.perflabFlame exposes zoom/reset/search; the URL hash
// #perflab-selftest:search=RE&click=NAME runs them through real mouse
// events and writes the outcome as JSON into #selftest (perflab's tests).
(function () {
	"use strict";
	var D = JSON.parse(document.getElementById("data").textContent);
	var N = D.n.length;
	var canvas = document.getElementById("flame"), ctx = canvas.getContext("2d");
	var tip = document.getElementById("tip"), matchedEl = document.getElementById("matched");
	var input = document.getElementById("term"), resetBtn = document.getElementById("reset");
	var H = 16, FONT = "12px Verdana, sans-serif", CHAR = 12 * 0.59;
	var maxDepth = 0, rows = [], end = new Int32Array(N), parent = new Int32Array(N);
	var view = { x: 0, w: D.total, node: 0 }, match = null, cw = 0, ch = 0;

	// Subtree ends and parents from the preorder depths.
	(function () {
		var stack = [];
		for (var i = 0; i < N; i++) {
			var d = D.d[i];
			if (d > maxDepth) maxDepth = d;
			while (stack.length > d) end[stack.pop()] = i;
			parent[i] = stack.length ? stack[stack.length - 1] : -1;
			stack.push(i);
			(rows[d] = rows[d] || []).push(i);
		}
		while (stack.length) end[stack.pop()] = N;
	})();

	function size() {
		var dpr = window.devicePixelRatio || 1;
		cw = Math.max(300, document.documentElement.clientWidth - 20);
		ch = (maxDepth + 1) * H;
		canvas.width = cw * dpr; canvas.height = ch * dpr;
		canvas.style.width = cw + "px"; canvas.style.height = ch + "px";
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	}

	function rowY(d) { return D.inverted ? d * H : ch - (d + 1) * H; }

	function color(i) {
		if (match && match[i]) return "rgb(230,0,230)";
		if (D.diff) {
			var dl = D.dl[i], m = D.maxDelta;
			if (!dl || !m) return "rgb(250,250,250)";
			var c = Math.floor(210 * (1 - Math.abs(dl) / m));
			return dl > 0 ? "rgb(255," + c + "," + c + ")" : "rgb(" + c + "," + c + ",255)";
		}
		return D.colors[D.n[i]];
	}

	function isAncestorOfView(i) {
		for (var p = view.node; p >= 0; p = parent[p]) if (p === i) return true;
		return false;
	}

	function draw() {
		ctx.clearRect(0, 0, cw, ch);
		ctx.font = FONT;
		ctx.textBaseline = "middle";
		var scale = cw / view.w, vd = D.d[view.node];
		for (var i = 0; i < N; i++) {
			var d = D.d[i], x, w;
			if (d < vd) {
				if (!isAncestorOfView(i)) { i = end[i] - 1; continue; }
				x = 0; w = cw; ctx.globalAlpha = 0.5;
			} else {
				x = (D.x[i] - view.x) * scale; w = D.v[i] * scale;
				if (x + w <= 0 || x >= cw || w < 0.3) { i = end[i] - 1; continue; }
				ctx.globalAlpha = 1;
			}
			var y = rowY(d);
			ctx.fillStyle = color(i);
			ctx.fillRect(x, y, Math.max(w - 0.5, 0.3), H - 1);
			var chars = Math.floor((w - 6) / CHAR);
			if (chars >= 3) {
				var name = D.names[D.n[i]];
				ctx.fillStyle = "#000";
				ctx.fillText(name.length <= chars ? name : name.substring(0, chars - 2) + "..", x + 3, y + H / 2);
			}
		}
		ctx.globalAlpha = 1;
		resetBtn.disabled = view.node === 0;
	}

	// hit finds the frame under canvas point (px, py), or -1.
	function hit(px, py) {
		var d = D.inverted ? Math.floor(py / H) : Math.floor((ch - py) / H);
		if (d < 0 || d > maxDepth || !rows[d]) return -1;
		var vd = D.d[view.node];
		var pos = view.x + px / cw * view.w;
		if (d < vd) {
			for (var p = view.node; p >= 0; p = parent[p]) if (D.d[p] === d) return p;
			return -1;
		}
		var r = rows[d], lo = 0, hi = r.length - 1;
		while (lo <= hi) {
			var mid = (lo + hi) >> 1, i = r[mid];
			if (D.x[i] + D.v[i] <= pos) lo = mid + 1;
			else if (D.x[i] > pos) hi = mid - 1;
			else return i;
		}
		return -1;
	}

	function pct(v) { return (100 * v / D.total).toFixed(2) + "%"; }
	// Counts are integers in units of 10^-scale (fractional input counts).
	var unit = Math.pow(10, D.scale || 0);
	function count(v) { return (v / unit).toLocaleString(undefined, { maximumFractionDigits: D.scale || 0 }); }

	function describe(i) {
		var s = D.names[D.n[i]] + " — " + count(D.v[i]) + " " + D.countName + " (" + pct(D.v[i]) + ")";
		if (D.s[i] && end[i] > i + 1) s += ", self " + pct(D.s[i]);
		var k = D.kinds[D.n[i]];
		if (k) s += ", " + k;
		if (D.diff) s += ", self " + (D.dl[i] > 0 ? "+" : "") + count(D.dl[i]) + " vs before";
		return s;
	}

	function zoom(i) {
		view = { x: D.x[i], w: D.v[i], node: i };
		draw();
	}
	function reset() { zoom(0); }

	function search(term) {
		var re = new RegExp(term), byName = [];
		for (var k = 0; k < D.names.length; k++) byName[k] = re.test(D.names[k]);
		match = new Uint8Array(N);
		var covered = 0, endX = -1, any = false;
		for (var i = 0; i < N; i++) {
			if (!byName[D.n[i]]) continue;
			match[i] = 1; any = true;
			// preorder: a match nested in an earlier one is already covered
			var s = Math.max(D.x[i], endX), e = D.x[i] + D.v[i];
			if (e > s) covered += e - s;
			if (e > endX) endX = e;
		}
		var p = 100 * covered / D.total;
		matchedEl.textContent = any ? "Matched: " + p.toFixed(2) + "%" : "No match";
		draw();
		return p;
	}
	function clearSearch() { match = null; matchedEl.textContent = ""; input.value = ""; draw(); }

	function local(e) {
		var r = canvas.getBoundingClientRect();
		return [e.clientX - r.left, e.clientY - r.top];
	}
	canvas.addEventListener("mousemove", function (e) {
		var p = local(e), i = hit(p[0], p[1]);
		if (i < 0) { tip.style.display = "none"; return; }
		tip.textContent = describe(i);
		tip.style.display = "block";
		tip.style.left = Math.min(e.pageX + 12, document.documentElement.clientWidth - 420) + "px";
		tip.style.top = (e.pageY + 14) + "px";
	});
	canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
	canvas.addEventListener("click", function (e) {
		var p = local(e), i = hit(p[0], p[1]);
		if (i >= 0) zoom(i);
	});
	resetBtn.addEventListener("click", reset);
	document.getElementById("searchform").addEventListener("submit", function (e) {
		e.preventDefault();
		if (input.value) search(input.value); else clearSearch();
	});
	window.addEventListener("keydown", function (e) {
		if (e.key === "Escape") { clearSearch(); reset(); }
		if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); input.focus(); }
	});
	window.addEventListener("resize", function () { size(); draw(); });

	function clickNode(i) {
		var r = canvas.getBoundingClientRect(), vd = D.d[view.node], x, w;
		if (D.d[i] < vd) { x = 0; w = cw; } else {
			x = (D.x[i] - view.x) * cw / view.w; w = D.v[i] * cw / view.w;
		}
		var ev = new MouseEvent("click", { bubbles: true, clientX: r.left + x + w / 2, clientY: r.top + rowY(D.d[i]) + H / 2 });
		canvas.dispatchEvent(ev);
	}
	window.perflabFlame = {
		zoom: function (name) {
			for (var i = 0; i < N; i++) if (D.names[D.n[i]] === name) { clickNode(i); return i; }
			return -1;
		},
		reset: reset, search: search, clear: clearSearch,
		view: function () { return { name: D.names[D.n[view.node]], x: view.x, w: view.w }; }
	};

	size();
	draw();

	(function selftest() {
		var h = decodeURIComponent(location.hash || "");
		if (h.indexOf("#perflab-selftest") !== 0) return;
		var params = {};
		h.substring(h.indexOf(":") + 1).split("&").forEach(function (kv) {
			var i = kv.indexOf("=");
			if (i > 0) params[kv.substring(0, i)] = kv.substring(i + 1);
		});
		var out = { frames: N, total: D.total };
		try {
			if (params.search) {
				out.matched = search(params.search);
				out.matchedText = matchedEl.textContent;
			}
			if (params.click) {
				var i = window.perflabFlame.zoom(params.click);
				out.clicked = i >= 0;
				var v = window.perflabFlame.view();
				out.zoomedName = v.name; out.zoomedCount = v.w; out.nodeCount = i >= 0 ? D.v[i] : 0;
				out.hover = i >= 0 ? describe(hit(cw / 2, rowY(D.d[i]) + H / 2)) : "";
				document.getElementById("reset").click();
				out.afterReset = window.perflabFlame.view();
			}
			out.ok = true;
		} catch (e) {
			out.error = String(e);
		}
		document.getElementById("selftest").textContent = JSON.stringify(out);
	})();
})();
