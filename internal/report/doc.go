// Package report renders a compare.Comparison for people and programs: an
// aligned terminal table (colour through termfmt, so NO_COLOR holds),
// Markdown for tickets and pull requests, JSON with the documented schema
// of docs/compare.md, and a self-contained HTML page (inline CSS and JS,
// SVG charts drawn by the page itself, no network: a strict
// Content-Security-Policy forbids every fetch).
//
// Every renderer leads with the likely causes, then the metrics. Numbers
// always carry their unit and, where measured, their uncertainty.
package report
