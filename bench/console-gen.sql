-- A fleet store for bench/console.sh, generated inside PostgreSQL from the
-- real runs of internal/serve/testdata/real-runs.json (imported first by
-- 'perflab runs import', which also creates the schema): :hosts hosts,
-- each with :runs runs of each real probe (cpu, syscall) 12 hours apart
-- and two snapshots (one per half). Every host runs faster or slower by a
-- fixed factor (±20%), every run moves by its own drift (σ 1%) and every
-- sample by its own noise (σ 0.3%). Planted: on every 100th host the newest
-- cpu run is 20% slower (compare calls it worse) and its second snapshot
-- has kernel.timer_migration 0 instead of 1.
--
-- psql -v hosts=10000 -v runs=50 -f bench/console-gen.sql  (1,000,000 runs)
--
-- Optional (bench/console-power.sh): -v plant_every=N plants every Nth
-- host (default 100), -v drop=F makes its newest cpu run F slower
-- (default 0.2).

\set ON_ERROR_STOP on
\if :{?plant_every}
\else
\set plant_every 100
\endif
\if :{?drop}
\else
\set drop 0.2
\endif
SET synchronous_commit = off;
-- our own rows reference our own runs: skip the foreign-key triggers
SET session_replication_role = replica;

-- One template per probe: its first real run, with the fields that vary
-- replaced by markers (the first occurrence of each key is the top-level
-- one: the document is run.Run as encoding/json writes it).
CREATE TEMP TABLE tpl AS
SELECT DISTINCT ON (probe) id AS src, probe,
	regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(doc,
		'"id":"[^"]*"', '"id":"@ID@"'), '"label":"[^"]*"', '"label":"@LABEL@"'),
		'"host":"[^"]*"', '"host":"@HOST@"'), '"snapshot_id":"[^"]*"', '"snapshot_id":"@SNAP@"'),
		'"started":"[^"]*"', '"started":"@STARTED@"'), '"ended":"[^"]*"', '"ended":"@ENDED@"') AS doc
FROM runs ORDER BY probe, started, id;

CREATE TEMP TABLE stpl AS
SELECT regexp_replace(regexp_replace(regexp_replace(doc,
	'"id":"[^"]*"', '"id":"@ID@"'), '"taken_at":"[^"]*"', '"taken_at":"@AT@"'),
	'"hostname":"[^"]*"', '"hostname":"@HOST@"') AS doc
FROM snapshots ORDER BY taken_at, id LIMIT 1;

CREATE TEMP TABLE samples_tpl AS SELECT * FROM samples WHERE run_id IN (SELECT src FROM tpl);

-- Schema 8 keeps each run's monitor series apart (run_series): every
-- generated run gets its template's. A store imported by an older perflab
-- (schema 7, for a before/after) keeps them in the document, as it was.
SELECT to_regclass('run_series') IS NOT NULL AS has_series \gset
\if :has_series
CREATE TEMP TABLE series_tpl AS SELECT run_id AS src, doc FROM run_series WHERE run_id IN (SELECT src FROM tpl);
DELETE FROM run_series;
\endif

DELETE FROM samples;
DELETE FROM runs;
DELETE FROM snapshots;

CREATE TEMP TABLE hosts AS
SELECT h, format('host-%s', lpad(h::text, 5, '0')) AS name,
	1 + 0.1 * ((h % 5) - 2) AS factor, h % :plant_every = 0 AS planted
FROM generate_series(1, :hosts) h;

-- t0 + i*12h + probe minute + host second, as RFC 3339 and nanoseconds.
CREATE TEMP TABLE gen AS
SELECT h.name AS host, h.factor, h.planted, t.probe, t.src, t.doc, i,
	format('%s-%s-%s', h.name, t.probe, lpad(i::text, 4, '0')) AS id,
	format('%s-s%s', h.name, CASE WHEN i < :runs / 2 THEN 0 ELSE 1 END) AS snap,
	format('%s-w%s', h.name, lpad((i / 10)::text, 2, '0')) AS label,
	extract(epoch FROM timestamptz '2026-01-01 00:00:00+00')::bigint + i * 43200
		+ CASE t.probe WHEN 'cpu' THEN 0 ELSE 60 END + h.h AS secs,
	-- the run's drift: Box–Muller, σ 1%
	1 + 0.01 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS drift
FROM hosts h CROSS JOIN tpl t CROSS JOIN generate_series(0, :runs - 1) i;

INSERT INTO snapshots (id, taken_at, host, doc)
SELECT format('%s-s%s', h.name, k),
	(extract(epoch FROM timestamptz '2026-01-01 00:00:00+00')::bigint + k * (:runs / 2) * 43200 + h.h - 30) * 1000000000,
	h.name,
	replace(replace(replace(
		CASE WHEN h.planted AND k = 1 THEN replace(s.doc, '"kernel.timer_migration":"1"', '"kernel.timer_migration":"0"') ELSE s.doc END,
		'@ID@', format('%s-s%s', h.name, k)),
		'@AT@', to_char(to_timestamp(extract(epoch FROM timestamptz '2026-01-01 00:00:00+00')::bigint + k * (:runs / 2) * 43200 + h.h - 30) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
		'@HOST@', h.name)
FROM hosts h CROSS JOIN stpl s CROSS JOIN generate_series(0, 1) k;

INSERT INTO runs (id, label, suite, probe, host, snapshot_id, started, complete, doc)
SELECT id, label, '', probe, host, snap, secs * 1000000000, 1,
	replace(replace(replace(replace(replace(replace(doc, '@ID@', id), '@LABEL@', label), '@HOST@', host), '@SNAP@', snap),
		'@STARTED@', to_char(to_timestamp(secs) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
		'@ENDED@', to_char(to_timestamp(secs + 10) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM gen;

\if :has_series
INSERT INTO run_series (run_id, doc) SELECT g.id, x.doc FROM gen g JOIN series_tpl x ON x.src = g.src;
\endif

-- 20-odd million rows: the primary key is built once afterwards.
ALTER TABLE samples DROP CONSTRAINT samples_pkey;
INSERT INTO samples (run_id, metric, iteration, value)
SELECT g.id, s.metric, s.iteration,
	s.value * g.factor * g.drift * CASE WHEN g.planted AND g.probe = 'cpu' AND g.i = :runs - 1 THEN 1 - :drop ELSE 1 END
		* (1 + 0.003 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))
FROM gen g JOIN samples_tpl s ON s.run_id = g.src;

ALTER TABLE samples ADD PRIMARY KEY (run_id, metric, iteration);

-- Each host's labels with their run counts (schema 7), as every writer
-- keeps them: the rows the generated runs add.
DELETE FROM host_labels;
INSERT INTO host_labels (host, label, runs) SELECT host, label, count(*) FROM runs GROUP BY host, label;
SET session_replication_role = origin;
ANALYZE;
