// Package datagen implements the 'datagen' connector: a source of random or
// sequential rows with Flink's options.
//
// Table options:
//
//	'rows-per-second'        rate limit of the whole table (default 10000),
//	                         above 0 and at most 1e12 (fractions too: 0.5
//	                         is a row every 2 s)
//	'number-of-rows'         total rows; the source is bounded when set
//	'fields.<f>.kind'        'random' (default) or 'sequence'
//	'fields.<f>.min'/'max'   bounds of random numbers
//	'fields.<f>.length'      length of random strings and bytes (default
//	                         100) and of arrays and maps (default 3); a
//	                         row may take at most 16 MiB, by an estimate
//	                         from the lengths
//	'fields.<f>.var-len'     random strings/bytes of length 0..length
//	'fields.<f>.start'/'end' range of a sequence; the source is bounded and
//	                         ends when any sequence is exhausted
//	'fields.<f>.null-rate'   share of NULLs (0..1)
//	'fields.<f>.max-past'    random TIMESTAMP, DATE and TIME values fall in
//	                         [now - max-past, now] (default 0: now)
//	'seed'                   (Sluice) seed of the random generators; equal
//	                         seeds give equal rows
//	'partitions'             (Sluice) number of partitions (default 1, at
//	                         most 1024); the rows, the sequences and the
//	                         rate are split between them
//
// Elements of an ARRAY or MULTISET take options under
// 'fields.<f>.element.', keys and values of a MAP under 'fields.<f>.key.'
// and 'fields.<f>.value.', and fields of a ROW under 'fields.<f>.<field>.'.
//
// A read returns at most 16 MiB of rows, and no more than the rate lets
// through; when no row is due it waits for the next, at most 100 ms.
//
// Invariants: a partition's rows have origin (partition, n) with n = 1, 2,
// ... in order; a bounded table yields exactly min(number-of-rows, shortest
// sequence) rows over all partitions; every row of a sequence column holds
// start + its global row index.
package datagen
