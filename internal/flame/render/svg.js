// perflab flame graph (SVG): hover for details, click to zoom, Reset Zoom,
// Search (or Ctrl-F) with a regular expression and the matched share.
// window.perflabFlame exposes zoom/reset/search for scripting; the URL
// hash #perflab-selftest:search=RE&click=NAME runs them and writes the
// outcome as JSON into the #selftest text element (used by perflab's tests).
(function () {
	"use strict";
	var svg, frames, details, unzoomBtn, matchedText, searchBtn;
	var fontW = 12 * 0.59, xpad = 10, W, inverted, searching = null;
	var all = [];

	function num(e, a) { return parseFloat(e.getAttribute(a)); }

	function init() {
		svg = document.documentElement;
		frames = document.getElementById("frames");
		details = document.getElementById("details").firstChild;
		unzoomBtn = document.getElementById("unzoom");
		matchedText = document.getElementById("matched");
		searchBtn = document.getElementById("search");
		W = num(svg, "width");
		inverted = svg.getAttribute("data-inverted") === "1";
		var gs = frames.getElementsByTagName("g");
		for (var i = 0; i < gs.length; i++) {
			var g = gs[i], r = g.getElementsByTagName("rect")[0];
			var t = g.getElementsByTagName("title")[0].textContent;
			var f = { g: g, r: r, t: g.getElementsByTagName("text")[0],
				x: num(r, "x"), w: num(r, "width"), y: num(r, "y"),
				fill: r.getAttribute("fill"), name: t.substring(0, t.lastIndexOf(" (")) };
			g.__f = f;
			all.push(f);
		}
		frames.addEventListener("click", function (e) {
			var g = up(e.target);
			if (g) zoom(g.__f);
		});
		frames.addEventListener("mouseover", function (e) {
			var g = up(e.target);
			if (g) details.nodeValue = g.getElementsByTagName("title")[0].textContent;
		});
		frames.addEventListener("mouseout", function () { details.nodeValue = " "; });
		unzoomBtn.addEventListener("click", reset);
		searchBtn.addEventListener("click", function () {
			if (searching) { clearSearch(); return; }
			var re = prompt("Search (regular expression):", "");
			if (re) search(re);
		});
		window.addEventListener("keydown", function (e) {
			if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
				e.preventDefault();
				var re = prompt("Search (regular expression):", "");
				if (re) search(re);
			} else if (e.key === "Escape") {
				clearSearch(); reset();
			}
		});
		window.perflabFlame = { zoom: zoomByName, reset: reset, search: search, clear: clearSearch };
		selftest();
	}

	function up(e) {
		while (e && e !== frames) {
			if (e.__f) return e;
			e = e.parentNode;
		}
		return null;
	}

	function fit(f, x, w) {
		f.r.setAttribute("x", x.toFixed(2));
		f.r.setAttribute("width", w.toFixed(2));
		f.t.setAttribute("x", (x + 3).toFixed(2));
		var chars = Math.floor(w / fontW);
		var s = "";
		if (chars >= 3) s = f.name.length <= chars ? f.name : f.name.substring(0, chars - 2) + "..";
		f.t.textContent = s;
	}

	var zoomed = null;
	function zoom(z) {
		zoomed = z;
		var ratio = (W - 2 * xpad) / z.w, eps = 0.0001;
		for (var i = 0; i < all.length; i++) {
			var f = all[i], below = inverted ? f.y < z.y : f.y > z.y;
			var g = f.g;
			if (f.x + eps >= z.x && f.x + f.w <= z.x + z.w + eps && !below) {
				fit(f, xpad + (f.x - z.x) * ratio, f.w * ratio);
				g.style.display = ""; g.style.opacity = "";
			} else if (below && f.x <= z.x + eps && f.x + f.w + eps >= z.x + z.w) {
				fit(f, xpad, W - 2 * xpad); // an ancestor: full width, faded
				g.style.display = ""; g.style.opacity = "0.5";
			} else {
				g.style.display = "none";
			}
		}
		unzoomBtn.style.opacity = "1";
		if (searching) search(searching);
	}

	function reset() {
		zoomed = null;
		for (var i = 0; i < all.length; i++) {
			var f = all[i];
			fit(f, f.x, f.w);
			f.g.style.display = ""; f.g.style.opacity = "";
		}
		unzoomBtn.style.opacity = "0";
		if (searching) search(searching);
	}

	function zoomByName(name) {
		for (var i = 0; i < all.length; i++) {
			if (all[i].name === name) {
				all[i].g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
				return all[i];
			}
		}
		return null;
	}

	// search highlights matching frames and reports the share of the
	// profile under them, counting nested matches once.
	function search(term) {
		var re = new RegExp(term);
		var ranges = [];
		for (var i = 0; i < all.length; i++) {
			var f = all[i];
			if (re.test(f.name)) {
				f.r.setAttribute("fill", "rgb(230,0,230)");
				ranges.push([f.x, f.x + f.w]);
			} else {
				f.r.setAttribute("fill", f.fill);
			}
		}
		searching = term;
		ranges.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
		var covered = 0, end = -1;
		for (var j = 0; j < ranges.length; j++) {
			var s = Math.max(ranges[j][0], end), e = ranges[j][1];
			if (e > s) covered += e - s;
			if (e > end) end = e;
		}
		var pct = 100 * covered / (W - 2 * xpad);
		matchedText.textContent = ranges.length ? "Matched: " + pct.toFixed(2) + "%" : "No match";
		searchBtn.style.opacity = "1";
		searchBtn.textContent = "Clear";
		return pct;
	}

	function clearSearch() {
		searching = null;
		for (var i = 0; i < all.length; i++) all[i].r.setAttribute("fill", all[i].fill);
		matchedText.textContent = " ";
		searchBtn.textContent = "Search";
	}

	function selftest() {
		var h = decodeURIComponent(location.hash || "");
		if (h.indexOf("#perflab-selftest") !== 0) return;
		var params = {};
		h.substring(h.indexOf(":") + 1).split("&").forEach(function (kv) {
			var i = kv.indexOf("=");
			if (i > 0) params[kv.substring(0, i)] = kv.substring(i + 1);
		});
		var out = { frames: all.length };
		try {
			if (params.search) {
				out.matched = search(params.search);
				out.matchedText = matchedText.textContent;
			}
			if (params.click) {
				var f = zoomByName(params.click);
				out.clicked = !!f;
				if (f) {
					out.zoomedWidth = parseFloat(f.r.getAttribute("width"));
					out.fullWidth = W - 2 * xpad;
					out.visible = all.filter(function (x) { return x.g.style.display !== "none"; }).length;
					out.matchedAfterZoom = matchedText.textContent;
				}
				reset();
				out.resetWidth = f ? parseFloat(f.r.getAttribute("width")) : 0;
				out.originalWidth = f ? f.w : 0;
				out.visibleAfterReset = all.filter(function (x) { return x.g.style.display !== "none"; }).length;
			}
			out.ok = true;
		} catch (e) {
			out.error = String(e);
		}
		document.getElementById("selftest").textContent = JSON.stringify(out);
	}

	if (document.readyState === "loading") window.addEventListener("load", init);
	else init();
})();
