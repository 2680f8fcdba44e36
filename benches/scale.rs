//! `cargo bench --bench scale`: many CRDs and many objects (issue 31), against the real
//! `kubectl-crd serve` binary in a child process, over HTTPS on loopback. `-- crds` or
//! `-- objects` runs one half; the objects half is described at [`objects`] (1,000,000
//! objects, 50,000 in quick mode, `SCALE_OBJECTS=N` for another count; `SCALE_MEMORY_ONLY=1`
//! stops after the memory loaded and after a restart).
//!
//! Full mode applies 2,000 CRDs of `shared/crds.rs` (deep objects, CEL rules, one to three
//! versions, printer columns, both scopes; 200 groups of 10 kinds); quick mode
//! (`SCALE_QUICK=1`, or `--quick` after `--`) applies 200. It prints, each next to its target:
//! the time until all are Established, aggregated and plain discovery (`/apis`),
//! `/openapi/v2` the first time and cached, `/openapi/v3/apis/<group>/<version>` and the
//! first `/openapi/v3` index (kubectl apply's first request), the
//! server's resident memory, and how long one more CRD takes to be Established (and the
//! documents to follow it) while the others exist.
//!
//! How each is judged (these machines vary 2× between sessions, so a time alone proves
//! nothing): every speed target is a ratio to a floor measured in the same run, on the same
//! server and client —
//! - all Established: against storing the same bodies as ConfigMaps (the store and HTTP
//!   cost of those bytes); target ≤ 2×: the CRD machinery may cost as much as storing;
//! - discovery: against listing stored ConfigMaps of the same size as the answer; ≤ 2×;
//! - `/openapi/v2` first: against decoding and encoding the CRDs' JSON once in the bench
//!   (the least any builder does); ≤ 20×. Cached, gzip accepted: against the first; ≤ 1/20
//!   (issue: 1 s and 50 ms). Cached, plain: against listing stored ConfigMaps of its size
//!   (sending that many bytes is its floor: 150 MiB at 2,000 CRDs); ≤ 2×. After one more
//!   CRD: against the first; ≤ 1/4 (not rebuilt whole). The first and the one after one
//!   more CRD are asked with gzip accepted, as every Go client (kubectl) asks: asked plain
//!   (until 2026-11-27, 21:00), both carried the 0.5 s of inflating and sending 150 MiB,
//!   which is no part of building and hid how little a rebuild writes;
//! - `/openapi/v3` per group-version: against listing stored ConfigMaps of its size; ≤ 2×.
//!   (Judged until 2026-11-27 against `GET /version`, ≤ 5×, on the belief that a
//!   group-version's document is small: the bench's are about 1 MiB, ten kinds of 40 KiB
//!   schemas, and no server sends 1 MiB in five round trips' time.)
//! - one more CRD Established with N present: against the first CRD Established on the
//!   empty server, same run; ≤ 2× (latency must not grow with N).
//!
//! Memory is not a speed: judged absolutely, at 2,000 (≤ 400 MiB). Quick mode prints it
//! unjudged: an idle server alone is about 30 MiB, so the pro-rata 40 MiB for 200 it was
//! once judged against was no target.
//! The absolute targets are printed beside, for the record. Nothing asserts; the
//! correctness of the same set is `tests/it/scale_crds.rs`.
//!
//! Measured 2026-11-26 (2 cores, shared), full mode, after the CRD controller and OpenAPI
//! fixes of issue 31: all Established 42 s (20× storing them); aggregated discovery 119 ms
//! (22× its size listed); `/openapi/v2` first 18 s (33× the codec), cached 416 ms (0.023×),
//! after one more CRD 12 s (0.68×); v3 per group-version 6 ms; one more CRD Established
//! 7.2 s (205× alone); 6.2 GiB resident (6.3 GiB once Established, before any OpenAPI).
//! Before the controller fixes, 200 CRDs were not Established after two minutes and 2,000
//! never were (the controller stopped).
//!
//! Then, with schemas compiled on first use, the controller decoding only changed CRDs and
//! discovery cached (same day, the machine at a load of about 10: storing the ConfigMaps
//! took 12.4 s; judge the ratios): all Established 145 s (11.7× storing them; every
//! create waits for a controller pass, which still grows with the CRDs); aggregated
//! discovery 6.0 ms (0.72×, met); `/openapi/v2` first 137 s (44×), cached 459 ms (0.003×),
//! after one more CRD 67 s (0.49×); one more CRD Established 195 ms (7.3× alone); resident
//! 605 MiB once Established (was 6.3 GiB), 2.2 GiB after the OpenAPI documents. Quick mode:
//! 1.9 s, 0.28 ms, 3.0 s, 23 ms, 16 ms (0.71×, met), 150 MiB once Established (was 1.1 GiB).
//! Still missed: `/openapi/v2` is built whole (its build allocates several times the
//! document, and mimalloc keeps what it frees: with `MIMALLOC_PURGE_DELAY=0` the quick
//! set's figure after OpenAPI was 287 MiB rather than 631), and all Established at 2,000.
//!
//! Beside kube-apiserver 1.32 (`SCALE_ORACLE`, quick mode, same run): all Established 3.4 s
//! vs 37.5 s; aggregated discovery 0.25 vs 1.07 ms; `/openapi/v2` first 3.1 vs 7.5 s, cached
//! 23 vs 49 ms, after one more CRD 2.3 s vs 24 ms (kube's is rebuilt lazily, per CRD: ours
//! is the one figure where it is far ahead); v3 per group-version 0.73 vs 2.6 ms; one more
//! CRD Established 16 vs 117 ms; resident 944 MiB vs 2,279 MiB (plus etcd's 83). In full
//! mode kube-apiserver grew past 10 GiB while the 2,000 were being established, and then
//! cut an answer short (`IncompleteBody`), which ended that run before its figures printed.
//!
//! Then, with the OpenAPI documents assembled from per-kind parts (a CRD change writes only
//! its own kinds' parts; same bytes as the whole build) and controller passes sharing their
//! CRD copies rather than cloning all of them (same day, 17:23, load about 11; storing the
//! ConfigMaps took 4.2 s): all Established 95 s (22.7×; was 145 s); `/openapi/v2` (157 MiB)
//! first 48.8 s (26.7×; was 137 s), cached 599 ms (0.012×; the transfer of 157 MiB), after
//! one more CRD 3.3 s (0.07×, met; was 67 s); v3 per group-version 6.7 ms; one more CRD
//! Established 29 ms (0.31× the first alone, met, and the 100 ms; was 195 ms);
//! resident 463 MiB once Established (was 605), 1,132 MiB after the OpenAPI documents (was
//! 2.2 GiB). Quick mode: `/openapi/v2` first 3.2 s (was 3.0), cached 32 ms, after one more
//! CRD 137 ms (was 2.3 s; kube-apiserver 24 ms), one more Established 9.2 ms, 218 MiB after
//! OpenAPI (was 631). Still missed: the first build (a part costs what the whole build cost
//! per kind: the schema steps of `crd_schema` clone `serde_json` maps at every level, and
//! allocation is most of a profile), all Established at 2,000 (each pass is still a walk
//! of every CRD), and memory once the documents exist (the v2 document alone is 157 MiB
//! of JSON plus its protobuf).
//!
//! Then, with the CRD controller working per change (it lists once and follows the watch; a
//! change queues the CRD and its group, a round looks at the queued ones only and writes
//! their statuses together rather than one commit after another; 2026-11-26, 20:33, load
//! about 5 on the 2 cores; storing the ConfigMaps took 5.6 s): all 2,000 Established 40.3 s
//! (7.2× storing them; was 95 s, 22.7×), one more Established 26.5 ms (0.53× the first
//! alone); a second run (20:49, load about 8, storing 3.4 s): 29.0 s (8.6×). Quick mode, the same session before and after (storing took 0.26–0.58 s, so
//! judge the ratios with care): 6.7 s (26×) before, 3.8 s (13×) and 5.2 s (16×) after; at
//! 200 CRDs the passes over all of them were not yet the cost, at 2,000 they were. Still
//! missed: a profile of the burst (quick mode, `perf`) has no controller bookkeeping left in
//! it; the time is the CPU of each CRD's two writes, a 40 KiB body decoded, pruned, typed
//! and encoded several times over in the create (7.5 ms of CPU by the samples, with its
//! request handling) and again in the status write (4.5 ms), where storing a ConfigMap of
//! those bytes took 1.4–2.8 ms of wall time per object (8 clients).
//!
//! Then, with each CRD's definitions written in one pass over its borrowed schema (no copy
//! per step), each version's schema read by the thread writing its part and dropped after
//! (not every CRD decoded as JSON and typed and held at once), swagger 2.0's shared
//! parameters written and hashed once per thread, and the protobuf derived from the JSON
//! when first asked for (as kube-openapi does; same bytes), same day, 21:08, quick mode
//! only (load about 4; full mode not run this session): `/openapi/v2` first 842 ms (15.5×
//! the codec, met; was 4,114 ms and 47.2× in a run of the previous build an hour before,
//! 3.2 s in the paragraph above), protobuf first 90 ms after it, cached 20.6 ms (protobuf
//! 15.3), after one more CRD 182 ms (0.22×, met); resident 159 MiB once Established, 248
//! after the documents (the previous build: 151 and 213). Beside the previous build on one
//! server each, back to back (200 CRDs, one plain GET each): first `/openapi/v2` 0.54 vs
//! 1.87 s, and resident right after it 266 vs 538 MiB (profiled half-way, half the first
//! build's time was the kernel zeroing fresh pages for CRDs decoded all at once). Found on the
//! way, recorded on the oracle: swagger 2.0 drops defaults, writes CEL rules' fields sorted
//! and escapes no `<`, `>`, `&`; ours now does the same. Still missed: memory after the
//! documents (the v3 documents are the largest part: about 1.7× the v2 JSON).
//!
//! Then, with each CRD write typing its 40 KiB body fewer times (same bytes answered and
//! stored): typed reads from the borrowed JSON, not a copy; the decode check and the
//! defaults sharing one typed read (`Strategy::decode_and_default`); a create's preparation,
//! and a `/status` write that sends the stored spec (the controller's), no longer typing the
//! schemas again (set aside, or left as they are), the latter validating only its status as
//! kube's status strategy does; Go-struct pruning writing a path only for what it drops;
//! managedFields computed on the request, not a copy (2026-11-27, 00:00–00:07, load 2–4
//! after hours near 9; the previous build run in turn with this one). Quick mode, four runs
//! each: all Established 632–832 ms (median 689; 3.4–4.8× storing them, median 4.3×), the
//! previous build 1,096–2,845 ms (median 1,273; 4.2–20.7×, median 6.8×). By the samples of
//! the burst (perf on `serve`, quick mode, at a similar load), CPU per CRD 9.4 ms before
//! (create with its request 2.6, controller and status write 3.1, the rest store, TLS and
//! unattributed stacks) and 6.1 ms after (1.8 and 1.7; store and TLS alike, 1.2 and 1.1).
//! Full mode: 9.7 s (1.54× storing them, which took 6.3 s that run; the 10 s) and
//! 19.2 s (6.7×, storing 2.9 s), the previous build between them 26.2 s (7.8×, storing 3.4
//! s). Still missed: ≤ 2×, and at 2,000 the time grows faster than the count (10× the CRDs
//! of quick mode took 14–28× its time), so beyond the per-write CPU something scales with
//! the CRDs present: the next profile is a full-mode one. Left in a write: a create types
//! its body twice (decode and defaults, then validation, which also compiles the CEL
//! rules) and writes it back once; the status write parses the stored object twice (the
//! controller's copy, the update's read) and types and writes back the body once, its
//! spec included (that could go only if every stored spec were known to be this engine's
//! writing, which data from elsewhere would break).
//!
//! Then, a full-mode profile of the burst (2026-11-27, 02:55–03:39; perf on `serve`, and
//! every thread's `/proc/<pid>/task/*/schedstat` read each 0.5 s): the CPU per CRD does not
//! grow with the CRDs present — by perf's samples 10.8 ms per CRD at 2,000 and 11.5 at 200;
//! by schedstat 11.2 ms at 2,000 and 7.7–11.7 at 200 — what grew was the wait for a core.
//! The machine ran at a load of 6–10 on its 2 cores: the server's threads spent 1.5 s in
//! the run queue per second of the burst (52 s over 34 s) and got about 0.7 of a core in
//! full mode, against 1.7 in quick mode; the floor, stored later, met another load, hence
//! the spread of the ratios. Two walks did grow with the CRDs present (about 1% of the
//! burst's samples at 2,000), and are now per resource: looking up a kind, its Table layout
//! or its watch window walked every CRD's kinds (every answer reads a Table layout: 4,000
//! custom layouts walked before the built-in one was used), now a (group, plural) index in
//! `Kinds`; and the compiled-schema cache swept its dead entries on every insertion (every
//! CRD's schemas walked per CRD published), now once it has doubled. Alternating the
//! `serve` binary under one bench binary: quick mode 2,792, 2,220, 2,357 ms before (7.3,
//! 4.7, 9.4× storing them) and 3,087, 3,144, 1,449 ms after (10.5, 9.9, 5.8×), CPU per CRD
//! 10.3–11.7 ms before and 9.5–10.7 after; full mode 31.7 s after (6.7×, storing 4.7 s; 10.0
//! ms of CPU per CRD, 53 s in the run queue) and 64.3 s before (8.9×, storing 7.2 s; 14.2 ms
//! per CRD at a load near 10), the previous build's earlier runs 23.2 s (7.3×) and 34.3 s
//! (11.7×; 11.2 ms per CRD). One more Established with 2,001 present: 39.8 ms after (1.76×
//! the first alone), 12.1 ms before. Still missed: ≤ 2× and 10 s, by the CPU of each CRD
//! (about 10 ms, where storing a ConfigMap of its bytes took 1.5–3.6 ms of wall time per
//! object in these runs): request handling 18% of the burst's samples, the create 15%, the
//! controller's status write 13% and its other work 17% (4% parsing the stored CRD again),
//! the committer 6%, and allocation and the kernel clearing fresh pages most of the rest.
//!
//! Then, with the server's CPU from the first create until all are Established printed
//! beside the ratio, per CRD and per ConfigMap of the floor (`/proc/<pid>/stat`), and a
//! status write that parses its CRD once (the controller reads the typed CRD it publishes
//! from the JSON it sends, and the update takes that JSON for the stored object while it
//! is still stored) and no longer copies the CRD's managedFields, which mirror its whole
//! spec, three times (2026-11-27, 05:26–06:20, load 2–4 from another engineer's builds;
//! the previous `serve` and this one run in turn under one bench binary). Quick mode,
//! eleven runs each: CPU per CRD median 8.45 ms before (6.60–10.80) and 7.10 after
//! (6.35–9.60), a ConfigMap about 1.0 ms in both; all Established median 1,477 ms (6.1×
//! storing them) before and 1,309 ms (5.3×) after. Full mode, five runs each: CPU per
//! CRD 7.2–11.3 ms before (median 8.8) and 8.2–9.6 after (median 8.8), all Established
//! 8.4–17.7 s (3.8–13.3×, median 5.7×) before and 9.7–18.7 s (4.0–9.9×, median 6.0×)
//! after: no change within the noise, not yet explained (no full-mode profile this
//! session); the creates are the burst there (the last returns as the last CRD is
//! Established), a ConfigMap 0.9–1.3 ms of CPU.
//! Still missed: ≤ 2× (by CPU, a CRD costs 7–9 ConfigMaps of its bytes). A perf profile
//! of the quick burst before the change: the kernel clearing fresh pages 13% (mimalloc's
//! new pages; `MIMALLOC_PURGE_DELAY=-1` did not lower the CPU), the create's decode,
//! typed twice and written back, 7%, its validation 5.5% (CEL compiled), the request
//! body's parse and duplicate-field scan 9% (shared with the floor), the store's WAL 5%.
//!
//! Then, with the OpenAPI documents held gzip-compressed: every member of a document
//! compressed on its own (raw deflate ended by a sync flush), so that a document is the
//! list of its members' compressed bytes, shared with the kinds' parts, in one gzip member,
//! and a rebuild still reuses unchanged kinds' parts; `/openapi/v2` sent as held to clients
//! accepting gzip, as kube-apiserver 1.32 does, and inflated while sent to the others; v3
//! documents always inflated (kube never gzips them); the v3 documents assembled on both
//! cores beside `/openapi/v2` (2026-11-27, 09:00–09:28, load 2.4–4.9; the previous `serve`
//! and these run in turn under one bench binary). Full mode, the final build twice, a
//! build that copied the members into each document once, the previous `serve` three
//! times: resident memory after the OpenAPI documents 602 and 604 MiB (the copying build
//! 592–604; before: 1,185, 1,192, 1,196), at the end, after one more CRD and its rebuild,
//! 636 and 606 (595–601; before: 1,373, 1,101, 1,083); once Established unchanged
//! (415–432). The 152.3 MiB of `/openapi/v2` are held in 26.6 MiB (5.7×). `/openapi/v2`
//! first 8.6 and 8.9 s (14.8× and 15.5× the codec, met; before 7.1–8.0 s, 11.3×–13.9×:
//! members are compressed when written and hashed by inflating them again when
//! assembled), protobuf first 1.15–1.85 s (before 1.31–1.70); cached, plain, 517 and 572
//! ms (0.060× and 0.064×, missed; before 261–319 ms, 0.033×–0.045×: inflating pieces
//! each with its own Huffman tables), cached with gzip accepted (kubectl and every Go
//! client) 55 and 57 ms (0.006×; 26.6 MiB sent; before 252–323 ms for 152 MiB); after
//! one more CRD 1.36 and 2.10 s (0.16× and 0.24×; before 1.36–2.66 s, 0.18×–0.38×: this
//! figure swung with the load in every build); v3 per group-version 5.9 and 6.2 ms (before
//! 4.9–9.9 ms, inflated per answer now). Quick mode, one run each: 184 MiB after the
//! documents (before 254), 188 at the end (251); first 884 ms (558), cached 43.7 ms plain
//! (22.9), 4.5 ms with gzip (2.7 MiB sent); v3 1.96 ms (0.99). A heap profile once 200
//! CRDs were Established (heaptrack, system allocator, 118 MB resident) found 38.5 MB
//! live: the stored CRDs 16.5 MB (400 values of about 41 KB: every CRD's created and its
//! status-written revision are both held), redb's page cache 8.2, compiled schemas 7.8,
//! nothing else above 1 MB; the rest of the resident figure is the allocator keeping what
//! the burst freed. Still missed: memory (≤ 400 MiB): once Established alone is 415–432
//! MiB at 2,000; and members compressed one by one keep 5.7× where the whole `/openapi/v2`
//! compresses 24× (zlib level 1: the CRDs repeat one another, which a piece cannot see):
//! pieces per run of a group-version's members would keep their reuse and most of that.
//!
//! Then (2026-11-27, 11:18–11:58, load 1–4 with another engineer's builds; the builds run
//! in turn under one bench binary), three changes to memory and one to plain answers:
//! - the "compiled schemas" of that profile were the kinds' schemas kept as JSON until
//!   first used (7.86 MB at 200 CRDs, as much as the stored CRDs); they are kept deflated
//!   now. Full mode: once Established 323 MiB against 435, at the end 508 against 627,
//!   CPU per CRD 6.12 against 6.41 ms;
//! - mimalloc no longer asks for transparent huge pages (`no_thp`): `AnonHugePages` was
//!   98 of the server's 153 MiB in quick mode, and a 2 MiB page is resident whole. Full
//!   mode, two runs each: idle 33–34 MiB against 43–46, once Established 280–281 against
//!   314–324, at the end 454 and 462 against 514 and 518; CPU per CRD 7.86 and 7.27 ms
//!   against 6.87 and 6.57 at a load of 3.5 (with the same build under
//!   `MIMALLOC_ALLOW_THP=0`/`1`: 7.11, 6.42 against 6.58, 6.82); 50,000 objects loaded
//!   at rates alike within the noise (11,788, 5,494, 12,387/s against 10,611, 5,850,
//!   12,529), resident 113–115 MiB against 127–130;
//! - a plain answer above 1 MiB is inflated by a task of its own, a few chunks ahead of
//!   the sending, on the other core: cached plain `/openapi/v2` 25.5 and 26.1 ms in quick
//!   mode against 32.6 and 33.7 (0.055× and 0.059× the first, target 0.05×), 404 ms in
//!   full mode against 470;
//! - each `/openapi/v3/<group-version>` document is one compressed stream (level 7:
//!   16.0× against 5.7× member by member), written again from the sources of all its
//!   kinds when one of them changes; the kinds' parts keep only what `/openapi/v2` needs.
//!   Full mode, four runs each, alternated, before the huge-page change (a helper's): after
//!   the documents 449–462 MiB against 487–502, at the end 458–482 against 486–520;
//!   `/openapi/v2` first 5.6–6.0 s against 5.4–5.8; after one more CRD 0.83–1.18 s against
//!   0.75–1.19; v3 per group-version 3.2–5.1 ms against 4.0–5.4. With the huge-page
//!   change beside it (two runs each, alternated): at the end 408 and 405 MiB against 465
//!   and 450;
//! - versions with the same printer columns share one Table layout (their parsed
//!   JSONPaths were 2.35 MB at 200 CRDs): at the end 400 and 387 MiB against 415 and 420.
//!
//! All of it together (12:48–12:49, load 1.9), three runs: resident at the end 391, 395
//! and 409 MiB (target 400: met twice; 400 and 387 in the two runs before), after the
//! documents 390–397, once Established 270–279, idle 32–33; all Established 7.0–8.1 s
//! (6.2–7.0× storing them; CPU per CRD 6.0–7.0 ms, a ConfigMap 0.71–0.77); `/openapi/v2`
//! first 5.05–5.19 s (9.5–9.6× the codec), cached plain 439–490 ms (0.085–0.095×, missed:
//! the first got faster), with gzip 39–57 ms; after one more CRD 1.11–1.15 s (0.21–0.23×);
//! v3 per group-version 3.2–6.2 ms; one more Established 6.1–6.9 ms.
//!
//! Then, with the versions of a CRD that repeat one schema sharing it (the bench's CRDs
//! all do; its deflate was about 4.6% of the burst's samples), alternated with the build
//! above (13:11–13:14, load 2.2–2.6): CPU per CRD 5.34 and 5.40 ms against 5.71 and 5.87,
//! all Established 6.27 and 6.30 s against 6.67 and 6.84; resident at the end 389 and
//! 406 MiB against 393 and 389 (the same within the noise).
//!
//! The system allocator, for comparison (same code before the schema change, heaptrack's
//! build): once Established 298 MiB, at the end 444, CPU per CRD 7.48 ms.
//!
//! Then (2026-11-27, 14:51–15:27, load 1.2–2.3), each step run after the one before:
//! - swagger 2.0's shared parameters (`pretty`, `limit`, ...: a name ends in a hash of its
//!   text) compressed and held once for all kinds rather than once per kind (heaptrack at
//!   600 CRDs, system allocator: the held v2 members were 15.8 MB, half of them these
//!   copies): after the documents 359 MiB against 385, at the end 364 against 398;
//! - a request finds the documents current by the kinds' generation and the store's
//!   revision when neither moved, rather than reading every CRD's key and every kind's
//!   summary (85% of a cached v3 answer by perf): v3 per group-version 0.91 ms against
//!   6.8–7.1, `/openapi/v2` with gzip 33 ms against 40–45;
//! - the cached plain `/openapi/v2` and the v3 documents judged against lists of stored
//!   bytes of their sizes (see above; 150 MiB and 680 KiB);
//! - a large document's ETag hashed on one core while its text is inflated on the other
//!   (inflating and hashing were 65% of a rebuild after one change): after one more CRD
//!   898 and 788 ms against 1.03–1.22 s (0.20× and 0.19×; 0.23–0.27× before, as the first
//!   build had got faster: 4.2–4.5 s against 5.2).
//!
//! All of it, two runs: resident at the end 381 and 376 MiB (after the documents 358 and
//! 352, once Established 266 and 265, idle 30–31); all Established 8.3 and 6.7 s (6.6× and
//! 5.9× storing them, missed; CPU per CRD 7.3 and 5.7 ms, a ConfigMap 0.81 and 0.69);
//! aggregated discovery 2.4 ms (0.44×); `/openapi/v2` first 4.5 and 4.2 s (8.3× and 7.1×
//! the codec), cached plain 638 and 579 ms (0.99× and 0.84× its size listed), with gzip
//! 37 and 53 ms; after one more CRD 898 and 788 ms; v3 per group-version 0.98 and 0.62 ms
//! (0.48× and 0.42× its size listed); one more Established 7.9 ms. Every verdict met but
//! all Established ≤ 2× storing them: a CRD costs 8–9 ConfigMaps of its bytes in CPU (its
//! create types its 40 KiB body twice, decoding and validating, and writes it back once;
//! the status write stores the whole CRD again, as kube's does).
//!
//! Beside kube-apiserver 1.32 in the same run (quick mode, 15:28): all 200 Established in
//! 0.66 s against 19.4 s, server CPU per CRD 5.6 ms against 140 ms; aggregated discovery
//! 0.28 against 1.01 ms; `/openapi/v2` first 0.43 against 4.4 s, cached 29 against 64 ms
//! (gzip 3.8 against 88), after one more CRD 64 ms against 3.7 s; v3 per group-version
//! 0.86 against 0.90 ms; one more Established 5.6 against 43 ms; resident 119 MiB against
//! 2,564 (and etcd's 82).
//!
//! Then (2026-11-27, 20:00–21:10, load 1.2–2.0), the documents written when first asked
//! for, as kube-openapi builds its specs lazily: `/openapi/v2` no longer writes every v3
//! document, nor the v3 index `/openapi/v2`, and a state reads a stored CRD only when it
//! writes a document of its kinds. By curl against the 2,000 CRDs (one `serve`, restarted
//! before each first request): the first plain `/openapi/v2` 2.18–2.24 s against 4.17–4.20
//! (server CPU 3.7 s against 7.5), with gzip accepted 1.79–1.97 s; the v3 index after it
//! 2.2–2.3 s (CPU 4.3–4.6 s: every v3 document); after one more CRD, gzip accepted, 0.37–
//! 0.39 s (CPU 0.53–0.55 s). The bench, plain as before (one run each): first 2.91 s, then
//! 2.99 s with every CRD read again for one more (after one more 1.34 s), then 1.10 s once
//! only the new CRD was. From here the first and the one after one more CRD are asked with
//! gzip accepted (see above); two full runs: first 1.98 and 2.36 s (3.66× and 2.88× the
//! codec), after one more CRD 440 and 511 ms (0.22× both: met; it was 0.37–0.46× asked
//! plain), cached with gzip 54 and 39 ms, the v3 index first 3.15 s in the second run
//! (1.34× the first `/openapi/v2`); resident after the documents 340 and 360 MiB (twenty v3
//! documents, then the index's), at the end 357 and 374; all Established 8.2 and 8.6 s
//! (7.0× and 6.4× storing them: missed, unchanged). Quick mode beside kube-apiserver in the
//! same run (21:06): `/openapi/v2` first with gzip 0.21 against 4.1 s, after one more CRD
//! 52 against 86 ms (0.25×), the v3 index first 139 against 2.4 ms (the bench has asked
//! for the document of each of the quick set's twenty groups before it: ours then writes
//! the built-in group-versions' documents, which kube-apiserver already had), resident
//! 122 MiB against 2,163.
//!
//! Then (21:30–21:36, load 1.7–2.1), whether a CRD version's schema is structural found
//! once for the CRD's revision (typing the schema to check it was a sixth of writing a
//! definition) and kept with the CRD's index entry: by curl, the v3 index after the first
//! `/openapi/v2` 1.84–1.92 s (CPU 3.65–3.79 s) against 2.2–2.3 s (CPU 4.3–4.6). The bench,
//! one full run: `/openapi/v2` first with gzip 1.99 s, after one more CRD 415 ms (0.21×),
//! cached with gzip 31 ms, the v3 index first 1.96 s (0.99× the first `/openapi/v2`),
//! resident after the documents 375 MiB, at the end 378; all Established 7.4 s (6.3×).
//!
//! Then (2026-11-27, 22:45–23:50, load 0.7–2.0), CRD writes and the CRD controller no
//! longer type the schemas (k8s-openapi builds 864 bytes a schema node, eleven slots a map
//! of properties; typing was 29% of the burst's samples): the decode checks them on the
//! JSON where they are, with a check that is sure exactly when the typed decode would take
//! them (else the whole is typed, and its error answers), and settles them in place as
//! their typed round trip did; the controller publishes a CRD from its cache's typed CRD,
//! which has no schemas, and the schemas' JSON from the stored object it parses anyway for
//! the status write, typed when a kind is first used. Quick mode, the previous `serve` and
//! each step run in turn under one bench binary: CPU per CRD 6.35–7.65 ms before, 5.30–5.70
//! after settling in place; a median of about 5.7 against 6.2 after the check (six runs
//! each); 4.40–5.60 against 4.60–5.90 after the publishing (four each, a quieter hour); all
//! 200 Established 524–653 ms at the end, 720–867 at the start. Typing is 11% of the
//! burst's samples now, most of it the create's validation (which reads the typed CRD).
//! Full mode, six runs of the last two builds: all Established 6.07–7.35 s (5.10–6.35×
//! storing them; CPU per CRD 5.30–6.28 ms, a ConfigMap 0.69–0.74: still missed, as 6.3–7.0×
//! before; the 10 s met in every run). Also, a CRD's head read in one pass that
//! notes where each version's schema is (a version's schema was found by another pass over
//! the whole CRD), and the CRDs indexed on both cores off the async workers: `/openapi/v2`
//! first with gzip 1.84–2.27 s (2.94–4.19× the codec; by curl, five runs each alternating
//! builds, 1.94–2.29 s both: no change within the noise), the v3 index first 1.72–2.00 s
//! (by curl 2.34–2.53 s against 2.46–2.67), resident at the end 369–386 MiB (the builds
//! before and after the publishing alternated: 383 and 377 against 372 and 371). Quick
//! mode beside kube-apiserver (00:05): all Established 0.65 against 15.5 s (server CPU per
//! CRD 5.4 against 146.5 ms), `/openapi/v2` first with gzip 0.20 against 4.2 s, after one
//! more CRD 52 against 85 ms (0.26× our first: a rebuild's fixed part, hashing the whole
//! text for the ETag, weighs more at 200 CRDs; 0.18–0.22× at 2,000), one more Established
//! 7 against 35 ms, resident 127 against 2,234 MiB.
//!
//! Then (2026-11-28, 05:00–06:05, full mode), a profile with call stacks (`perf --call-graph
//! dwarf`) of the burst placed the server's CPU: the create requests 29% (reading the body
//! 9.7%, of it 4.5% a second walk for repeated fields; validation 8.6%; the answer 3.7%),
//! the CRD controller 32% (its status writes 18%, of them 6.3% the field manager and 3.4%
//! the copy of the stored CRD the write sends; parsing the stored CRDs 6.8%; publishing
//! 3%), the store's writer 6.8% (2.4% the log's CRC-32C, a byte at a time). The body is now
//! read once (its repeats found while it is built), the CRC taken by the CPU's instruction,
//! and an update's field manager compares the stored object as it is: under the profiler,
//! reading the body 6.8%, the CRC 0.3%, the field manager 2.2%, CPU per CRD 6.21 ms against
//! 7.20 and 7.53. Without it the bench cannot tell them apart (two runs of each build,
//! alternated: all Established 6.2 and 7.9 s before, 6.3 and 7.0 after; creates/s in
//! quick mode 8,750–10,221 before, 8,611–11,281 after). The first `/openapi/v2` (1.9–2.3 s
//! with 2,000 CRDs) is three phases: the CRDs' index 0.25 s; the kinds' shares 1.65 s on
//! both cores (a schema's JSON read 19% of it, the typed check that it is structural 16%,
//! once per revision, writing the definitions 17%, compressing about 20%); and the ETag,
//! the SHA-512 of 152 MiB of text inflated again, 0.5 s. The 1 s would need the
//! last phase gone and the second halved.
//!
//! Then (2026-11-28, 07:30–08:45, full mode, profiled the same way): 6.6% of the burst's
//! samples were the CRD write's wait for its change to be served decoding the whole answer
//! again to find its resourceVersion (and an answer asked as YAML was not waited for at
//! all). The revision is now read off the answer's JSON where it is made, for CRD answers
//! only. The schema walks for embedded resources and for set and map lists skip subtrees
//! that have none (three walks over every object written, 3.3% of a load of 150,000
//! custom resources whose schema has neither). Under the profiler, CPU per CRD 5.90 ms
//! against 7.37 for the morning's build. Without it, four full runs alternated between the
//! build with the first change alone and the build with both: all Established 6.4 and 5.3 s
//! with the first, 7.0 and 7.6 with both; CPU per CRD 5.0 and 4.3 ms, 5.6 and 5.0; in quick
//! mode the other way round (0.73 s with the first, 0.57 and 0.62 with both, 0.68 for the
//! morning's build): the machine's noise again. A committer that parks while it
//! lingers for a batch (instead of yielding in a loop, 4% of a load's samples in
//! `sched_yield`) could not be told apart either (100,000 creates, CPU per 1,000 creates
//! 103–144 ms before, 109–135 after), and was left out.

#[path = "shared/allocator.rs"]
mod allocator;
#[path = "shared/crds.rs"]
mod crds;
#[path = "shared/objects.rs"]
mod objects;
#[path = "shared/served.rs"]
mod served;

use futures::{AsyncBufReadExt, StreamExt};
use serde::Deserialize;
use served::{cpu_seconds, ms, percentile, rss_mib, settled_rss_mib};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENTS: usize = 8;
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// GET `uri` with `accept`; the body and the time it took. A failure (kube-apiserver cuts
/// answers that outlast its request timeout) is printed, with an empty body, rather than
/// ending the run: the figures of the other server stand.
async fn get(client: &kube::Client, uri: &str, accept: &str) -> (Vec<u8>, Duration) {
    get_encoded(client, uri, accept, "identity").await
}

/// As [`get`], with `Accept-Encoding: encoding` (the body as sent: this client inflates
/// nothing).
async fn get_encoded(client: &kube::Client, uri: &str, accept: &str, encoding: &str) -> (Vec<u8>, Duration) {
    let start = Instant::now();
    let req = http::Request::get(uri).header("accept", accept).header("accept-encoding", encoding);
    let req = req.body(Vec::new()).expect("request");
    let mut bytes = Vec::new();
    let read = match client.request_stream(req).await {
        Ok(mut body) => {
            futures::AsyncReadExt::read_to_end(&mut body, &mut bytes).await.map(|_| ()).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = read {
        println!("  GET {uri} failed after {}: {e}", ms(start.elapsed()));
        bytes.clear();
    }
    (bytes, start.elapsed())
}

/// `rounds` GETs of `uri`: the sorted times, the last body.
async fn gets(client: &kube::Client, uri: &str, accept: &str, rounds: usize) -> (Vec<Duration>, Vec<u8>) {
    let mut times = Vec::with_capacity(rounds);
    let mut body = Vec::new();
    for _ in 0..rounds {
        let (b, t) = get(client, uri, accept).await;
        times.push(t);
        body = b;
    }
    times.sort();
    (times, body)
}

/// POSTs every body to `uri` from CLIENTS tasks.
async fn create_all(client: &kube::Client, uri: &str, bodies: Vec<Vec<u8>>) {
    let bodies = Arc::new(bodies);
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (client, bodies, uri) = (client.clone(), bodies.clone(), uri.to_string());
            tokio::spawn(async move {
                for body in bodies.iter().skip(c).step_by(CLIENTS) {
                    let req = http::Request::post(&uri)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .expect("request");
                    client.request_text(req).await.unwrap_or_else(|e| panic!("POST {uri}: {e}"));
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("creator");
    }
}

#[derive(Deserialize)]
struct Event {
    object: Crd,
}

#[derive(Deserialize)]
struct Crd {
    metadata: Meta,
    #[serde(default)]
    status: Option<Status>,
}

#[derive(Deserialize)]
struct Meta {
    name: String,
}

#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    conditions: Option<Vec<Condition>>,
}

#[derive(Deserialize)]
struct Condition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
}

/// Watches CRDs from now on; the returned task ends when every one of `names` has been
/// seen Established. Only names and conditions are decoded, so the bench's own cost stays
/// small beside the server's.
async fn established(client: &kube::Client, names: HashSet<String>) -> tokio::task::JoinHandle<()> {
    let (list, _) = get(client, &format!("{CRDS}?limit=1"), "application/json").await;
    let list: serde_json::Value = serde_json::from_slice(&list).expect("CRD list");
    let rv = list["metadata"]["resourceVersion"].as_str().expect("resourceVersion").to_string();
    let uri = format!("{CRDS}?watch=1&resourceVersion={rv}&timeoutSeconds=1800");
    let req = http::Request::get(uri).body(Vec::new()).expect("request");
    let mut lines = client.request_stream(req).await.expect("watch").lines();
    tokio::spawn(async move {
        let mut waiting = names;
        while !waiting.is_empty() {
            let line = lines.next().await.expect("the watch ended early").expect("watch line");
            let event: Event = serde_json::from_str(&line).expect("watch event");
            let up = event.object.status.iter().flat_map(|s| s.conditions.iter().flatten());
            if up.into_iter().any(|c| c.type_ == "Established" && c.status == "True") {
                waiting.remove(&event.object.metadata.name);
            }
        }
    })
}

/// Creates CRD `i` and waits until it is Established: the time from the POST.
async fn one_more(client: &kube::Client, i: usize) -> Duration {
    let waiter = established(client, HashSet::from([crds::name(i)])).await;
    let start = Instant::now();
    create_all(client, CRDS, vec![serde_json::to_vec(&crds::crd(i)).expect("JSON")]).await;
    waiter.await.expect("waiter");
    start.elapsed()
}

/// A figure, its target and the verdict.
fn verdict(what: &str, figure: String, judged: String, ok: bool) {
    println!("  {what:<44} {figure:<28} {judged:<44} {}", if ok { "ok" } else { "MISSED" });
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

/// Every figure of one server, measured the same way on ours and on the oracle.
struct Figures {
    version_rt: Duration,
    first_alone: Duration,
    /// How many of the set were Established within the budget, and when the last was.
    established_count: usize,
    all_established: Option<Duration>,
    created: Duration,
    /// The server's CPU seconds (user and system) from the first create until all were
    /// Established: unlike the times, barely moved by the machine's other load.
    burst_cpu: f64,
    agg: Vec<u8>,
    agg_first: Duration,
    agg_p50: Duration,
    plain_len: usize,
    plain_p50: Duration,
    v2_len: usize,
    /// The first `/openapi/v2`, asked with gzip accepted (so is `v2_after`).
    v2_first: Duration,
    v2_p50: Duration,
    /// `/openapi/v2` asked with `Accept-Encoding: gzip`, as Go clients (kubectl) ask: the
    /// size sent and p50.
    v2_gzip_len: usize,
    v2_gzip_p50: Duration,
    /// The first protobuf GET, after the JSON ones (the protobuf is derived when first asked).
    pb_first: Duration,
    pb_p50: Duration,
    v3_p50: Duration,
    /// The first `/openapi/v3` index, after `v3_p50`'s twenty documents: the others are
    /// written for it.
    v3_index_first: Duration,
    /// The mean size of the v3 documents asked for.
    v3_len: usize,
    more: Duration,
    v2_after: Duration,
    v3_after: Duration,
    /// Resident MiB: idle, once all were Established, after the OpenAPI documents, at the end.
    rss: [f64; 4],
}

/// Applies the set of `n` CRDs to a server and measures everything, giving up waiting for
/// Established after `budget` (the oracle may hold fewer in the time). `pid` is the
/// server's process, `rss` reads its memory.
async fn measure(client: &kube::Client, n: usize, budget: Duration, pid: u32, rss: &dyn Fn() -> f64) -> Figures {
    let p50 = |d: &[Duration]| percentile(d, 0.5);
    let (version_rt, _) = gets(client, "/version", "application/json", 50).await;
    // The probe CRD (index n + 1) on the empty server: the floor of "one more".
    let first_alone = one_more(client, n + 1).await;
    let idle = rss();

    let bodies: Vec<Vec<u8>> = (0..n).map(|i| serde_json::to_vec(&crds::crd(i)).expect("JSON")).collect();
    let waiter = established(client, (0..n).map(crds::name).collect()).await;
    let (start, cpu_before) = (Instant::now(), cpu_seconds(pid));
    create_all(client, CRDS, bodies).await;
    let created = start.elapsed();
    let waited = tokio::time::timeout(budget.saturating_sub(created), waiter).await;
    let all_established = waited.is_ok().then(|| start.elapsed());
    let burst_cpu = cpu_seconds(pid) - cpu_before;
    let established_count = if all_established.is_some() { n } else { count_established(client).await };
    let rss_established = rss();

    let (agg, agg_first) = get(client, "/apis", AGGREGATED).await;
    if !String::from_utf8_lossy(&agg).contains("APIGroupDiscoveryList") {
        println!("  aggregated discovery did not answer an APIGroupDiscoveryList");
    }
    let (agg_times, _) = gets(client, "/apis", AGGREGATED, 20).await;
    let (plain_times, plain) = gets(client, "/apis", "application/json", 20).await;

    let (_, v2_first) = get_encoded(client, "/openapi/v2", "application/json", "gzip").await;
    let (v2_times, v2) = gets(client, "/openapi/v2", "application/json", 10).await;
    let mut v2_gzip_times = Vec::new();
    let mut v2_gzip_len = 0;
    for _ in 0..10 {
        let (body, t) = get_encoded(client, "/openapi/v2", "application/json", "gzip").await;
        v2_gzip_len = body.len();
        v2_gzip_times.push(t);
    }
    v2_gzip_times.sort();
    let (_, pb_first) = get(client, "/openapi/v2", PROTOBUF_V2).await;
    let (pb_times, _) = gets(client, "/openapi/v2", PROTOBUF_V2, 10).await;
    let (mut v3_times, mut v3_bytes) = (Vec::new(), Vec::new());
    for i in (0..n).step_by(n / 20) {
        let uri = format!("/openapi/v3/apis/{}/v1", crds::group(i));
        let (times, body) = gets(client, &uri, "application/json", 3).await;
        v3_times.extend(times);
        v3_bytes.push(body.len());
    }
    v3_times.sort();
    // kubectl apply's first request: the index needs every group-version's document.
    let (_, v3_index_first) = get(client, "/openapi/v3", "application/json").await;
    let rss_openapi = rss();

    let more = one_more(client, n).await;
    let (_, v2_after) = get_encoded(client, "/openapi/v2", "application/json", "gzip").await;
    let (_, v3_after) = get(client, &format!("/openapi/v3/apis/{}/v1", crds::group(n)), "application/json").await;
    Figures {
        version_rt: p50(&version_rt),
        first_alone,
        established_count,
        all_established,
        created,
        burst_cpu,
        agg,
        agg_first,
        agg_p50: p50(&agg_times),
        plain_len: plain.len(),
        plain_p50: p50(&plain_times),
        v2_len: v2.len(),
        v2_first,
        v2_p50: p50(&v2_times),
        v2_gzip_len,
        v2_gzip_p50: p50(&v2_gzip_times),
        pb_first,
        pb_p50: p50(&pb_times),
        v3_p50: p50(&v3_times),
        v3_index_first,
        v3_len: v3_bytes.iter().sum::<usize>() / v3_bytes.len().max(1),
        more,
        v2_after,
        v3_after,
        rss: [idle, rss_established, rss_openapi, rss()],
    }
}

/// How many CRDs are Established now.
async fn count_established(client: &kube::Client) -> usize {
    let (list, _) = get(client, CRDS, "application/json").await;
    let list: serde_json::Value = serde_json::from_slice(&list).unwrap_or_default();
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter(|crd| {
            let conditions = crd["status"]["conditions"].as_array().cloned().unwrap_or_default();
            conditions.iter().any(|c| c["type"] == "Established" && c["status"] == "True")
        })
        .count()
}

fn main() {
    let quick = std::env::var_os("SCALE_QUICK").is_some() || std::env::args().any(|a| a == "--quick");
    let n = if quick { 200 } else { 2000 };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    // `-- objects` or `-- crds` runs one half only.
    let only = |half: &str| std::env::args().skip(1).filter(|a| a == "objects" || a == "crds").all(|a| a == half);
    if only("objects") {
        let count = std::env::var("SCALE_OBJECTS").ok().and_then(|n| n.parse().ok());
        runtime.block_on(objects(count.unwrap_or(if quick { 50_000 } else { 1_000_000 })));
    }
    if !only("crds") {
        return;
    }
    runtime.block_on(async {
        rustls::crypto::ring::default_provider().install_default().ok();
        let served = served::serve();
        let pid = served.child.id();
        let client = served::connect(&served.dir.path().join("kubeconfig"), None).await;
        println!("scale: {n} CRDs over HTTPS on {} ({CLIENTS} clients); serve ready after {}", served.addr, ms(served.ready_after));
        let f = measure(&client, n, Duration::from_secs(3600), pid, &|| rss_mib(pid)).await;
        let all_established = f.all_established.expect("all Established within the hour");

        // Floors, after the figures they judge so they do not weigh on the memory.
        let bodies: Vec<Vec<u8>> = (0..n).map(|i| serde_json::to_vec(&crds::crd(i)).expect("JSON")).collect();
        let total_bytes: usize = bodies.iter().map(Vec::len).sum();
        let floor_bodies: Vec<Vec<u8>> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("floor-{i:05}")},
                    "data": {"crd": String::from_utf8_lossy(b)}});
                serde_json::to_vec(&cm).expect("JSON")
            })
            .collect();
        let (start, cpu_before) = (Instant::now(), cpu_seconds(pid));
        create_all(&client, "/api/v1/namespaces/default/configmaps", floor_bodies).await;
        let store_floor = start.elapsed();
        let store_floor_cpu = cpu_seconds(pid) - cpu_before;
        let discovery_floor = sized_list_floor(&client, "scale-floor", f.agg.len()).await;
        let v2_floor = sized_list_floor(&client, "scale-floor-v2", f.v2_len).await;
        let v3_floor = sized_list_floor(&client, "scale-floor-v3", f.v3_len).await;
        let codec_floor = {
            let start = Instant::now();
            for b in &bodies {
                let v: serde_json::Value = serde_json::from_slice(b).expect("JSON");
                std::hint::black_box(serde_json::to_vec(&v).expect("JSON"));
            }
            start.elapsed()
        };
        drop(served);

        let scaled = |target_ms: f64| format!("issue: ≤ {:.0} ms at 2,000", target_ms);
        println!("  sizes: CRDs {:.1} MiB in all; aggregated discovery {:.0} KiB, plain {:.0} KiB; /openapi/v2 {:.1} MiB; /openapi/v3 per group-version {:.0} KiB",
            total_bytes as f64 / 1048576.0, f.agg.len() as f64 / 1024.0, f.plain_len as f64 / 1024.0, f.v2_len as f64 / 1048576.0, f.v3_len as f64 / 1024.0);
        println!("  floors: GET /version {}; {n} ConfigMaps of the same bytes stored {}; decode+encode the CRDs in the bench {}; lists of stored bytes the size of discovery {}, of /openapi/v2 {}, of a v3 document {}",
            ms(f.version_rt), ms(store_floor), ms(codec_floor), ms(discovery_floor), ms(v2_floor), ms(v3_floor));
        println!("  (all created {} before the last was Established)", ms(f.created));
        println!("  {:<44} {:<28} {:<44} verdict", "figure", "measured", "judged as (target)");
        let r = ratio(all_established, store_floor);
        verdict(&format!("all {n} Established"), ms(all_established), format!("{r:.2}× storing them (≤ 2×); {}", scaled(10_000.0)), r <= 2.0);
        let per = |cpu: f64| format!("{:.2} ms", cpu * 1e3 / n as f64);
        println!("  (server CPU per CRD until all were Established {}, per ConfigMap stored {}: {:.2}×)",
            per(f.burst_cpu), per(store_floor_cpu), f.burst_cpu / store_floor_cpu.max(1e-9));
        let r = ratio(f.agg_p50, discovery_floor);
        verdict("aggregated discovery /apis p50", format!("{} (first {})", ms(f.agg_p50), ms(f.agg_first)), format!("{r:.2}× its size listed (≤ 2×); {}", scaled(20.0)), r <= 2.0);
        let r = ratio(f.plain_p50, f.version_rt);
        verdict("plain discovery /apis p50", ms(f.plain_p50), format!("{r:.2}× GET /version (no target)"), true);
        let r = ratio(f.v2_first, codec_floor);
        verdict("/openapi/v2 first, gzip accepted", format!("{} (protobuf {})", ms(f.v2_first), ms(f.pb_first)), format!("{r:.2}× the CRDs' codec (≤ 20×); {}", scaled(1000.0)), r <= 20.0);
        let (r, first) = (ratio(f.v2_p50, v2_floor), ratio(f.v2_p50, f.v2_first));
        verdict("/openapi/v2 cached p50", format!("{} (protobuf {})", ms(f.v2_p50), ms(f.pb_p50)), format!("{r:.2}× its size listed (≤ 2×), {first:.3}× the first"), r <= 2.0);
        let r = ratio(f.v2_gzip_p50, f.v2_first);
        verdict("/openapi/v2 cached p50, gzip accepted", format!("{} ({:.1} MiB sent)", ms(f.v2_gzip_p50), f.v2_gzip_len as f64 / 1048576.0), format!("{r:.3}× the first (≤ 0.05×); {}", scaled(50.0)), r <= 0.05);
        let r = ratio(f.v2_after, f.v2_first);
        verdict("/openapi/v2 after one more CRD, gzip", ms(f.v2_after), format!("{r:.2}× the first (≤ 0.25×)"), r <= 0.25);
        let r = ratio(f.v3_p50, v3_floor);
        verdict("/openapi/v3/apis/<g>/<v> cached p50", ms(f.v3_p50), format!("{r:.2}× its size listed (≤ 2×); {}", scaled(20.0)), r <= 2.0);
        let r = ratio(f.v3_index_first, f.v2_first);
        verdict("/openapi/v3 index first", ms(f.v3_index_first), format!("{r:.2}× /openapi/v2 first (no target)"), true);
        let r = ratio(f.v3_after, f.version_rt);
        verdict("/openapi/v3 of the new CRD's group", ms(f.v3_after), format!("{r:.2}× GET /version (no target)"), true);
        let r = ratio(f.more, f.first_alone);
        verdict(&format!("one more Established with {} present", n + 1), ms(f.more), format!("{r:.2}× the first alone, {} (≤ 2×); {}", ms(f.first_alone), scaled(100.0)), r <= 2.0);
        let [idle, rss_established, rss_openapi, rss] = f.rss;
        println!("  (resident memory: {idle:.0} MiB idle, {rss_established:.0} once all were Established, {rss_openapi:.0} after the OpenAPI documents were built)");
        let judged = if quick { "judged at 2,000 only (issue: ≤ 400 MiB)".to_string() } else { "≤ 400 MiB (the issue's)".to_string() };
        verdict("resident memory", format!("{rss:.0} MiB ({idle:.0} idle)"), judged, quick || rss <= 400.0);

        if let Some(kit) = std::env::var_os("SCALE_ORACLE") {
            // The same set within the time ours took, or five minutes if longer.
            let budget = all_established.max(Duration::from_secs(300));
            beside_the_oracle(std::path::Path::new(&kit), n, budget, &f).await;
        }
    });
}

/// A real kube-apiserver (and its etcd) from the oracle kit, stopped when dropped.
struct Oracle {
    kit: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = std::process::Command::new(self.kit.join("stop.sh")).arg(self.dir.path()).status();
    }
}

impl Oracle {
    fn start(kit: &std::path::Path) -> Oracle {
        let dir = tempfile::tempdir().expect("tempdir");
        let oracle = Oracle { kit: kit.to_path_buf(), dir };
        let started = std::process::Command::new(kit.join("start.sh")).arg(oracle.dir.path()).status();
        assert!(started.is_ok_and(|s| s.success()), "the oracle did not start");
        oracle
    }

    /// The pid of `name` (`kube-apiserver`, `etcd`) from the kit's `pids` file.
    fn pid(&self, name: &str) -> u32 {
        let pids = std::fs::read_to_string(self.dir.path().join("pids")).expect("pids");
        pids.lines()
            .find_map(|l| {
                let mut words = l.split_whitespace();
                (words.next() == Some(name)).then(|| words.next()?.parse().ok()).flatten()
            })
            .unwrap_or_else(|| panic!("no {name} in pids"))
    }
}

/// Measures the real kube-apiserver of the oracle kit `kit` with the same set and prints
/// its figures beside ours (`ours`); the comparison.
async fn beside_the_oracle(kit: &std::path::Path, n: usize, budget: Duration, ours: &Figures) {
    let oracle = Oracle::start(kit);
    let (api, etcd) = (oracle.pid("kube-apiserver"), oracle.pid("etcd"));
    let client = served::connect(&oracle.dir.path().join("kubeconfig"), None).await;
    let etcd_rss = std::sync::Mutex::new(Vec::new());
    let theirs = measure(&client, n, budget, api, &|| {
        etcd_rss.lock().expect("lock").push(rss_mib(etcd));
        rss_mib(api)
    })
    .await;
    let etcd_rss = etcd_rss.into_inner().expect("lock");
    println!(
        "beside kube-apiserver 1.32 (oracle kit, etcd 3.4, same machine, same run; Established budget {}):",
        ms(budget)
    );
    println!("  {:<44} {:<28} {:<28}", "figure", "kubectl-crd serve", "kube-apiserver");
    let row = |what: &str, a: String, b: String| println!("  {what:<44} {a:<28} {b:<28}");
    let done = |f: &Figures| match f.all_established {
        Some(t) => format!("{} of {n} in {}", f.established_count, ms(t)),
        None => format!("{} of {n} in {} (budget)", f.established_count, ms(budget)),
    };
    row("CRDs Established", done(ours), done(&theirs));
    let cpu = |f: &Figures| format!("{:.2} ms a CRD", f.burst_cpu * 1e3 / f.established_count.max(1) as f64);
    row("server CPU until Established", cpu(ours), cpu(&theirs));
    row("aggregated discovery /apis p50", ms(ours.agg_p50), ms(theirs.agg_p50));
    row("plain discovery /apis p50", ms(ours.plain_p50), ms(theirs.plain_p50));
    row(
        "/openapi/v2 first, gzip (protobuf first)",
        format!("{} ({})", ms(ours.v2_first), ms(ours.pb_first)),
        format!("{} ({})", ms(theirs.v2_first), ms(theirs.pb_first)),
    );
    row(
        "/openapi/v2 cached p50 (protobuf)",
        format!("{} ({})", ms(ours.v2_p50), ms(ours.pb_p50)),
        format!("{} ({})", ms(theirs.v2_p50), ms(theirs.pb_p50)),
    );
    row("/openapi/v2 cached p50, gzip accepted", ms(ours.v2_gzip_p50), ms(theirs.v2_gzip_p50));
    row("/openapi/v2 after one more CRD, gzip", ms(ours.v2_after), ms(theirs.v2_after));
    row("/openapi/v3/apis/<g>/<v> p50", ms(ours.v3_p50), ms(theirs.v3_p50));
    row("/openapi/v3 index first", ms(ours.v3_index_first), ms(theirs.v3_index_first));
    row("one more CRD Established", ms(ours.more), ms(theirs.more));
    row("first CRD Established, empty server", ms(ours.first_alone), ms(theirs.first_alone));
    let mib = |r: &[f64; 4]| format!("{:.0} MiB ({:.0} idle)", r[3], r[0]);
    row("resident memory (server)", mib(&ours.rss), mib(&theirs.rss));
    row("resident memory (etcd)", "-".into(), format!("{:.0} MiB", etcd_rss.last().copied().unwrap_or(0.0)));
}

/// Lists stored ConfigMaps holding about `bytes` in all (512 KiB each): what serving that
/// many stored bytes costs, p50 of 10.
async fn sized_list_floor(client: &kube::Client, ns: &str, bytes: usize) -> Duration {
    const EACH: usize = 512 * 1024;
    let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    create_all(client, "/api/v1/namespaces", vec![serde_json::to_vec(&namespace).expect("JSON")]).await;
    let maps: Vec<Vec<u8>> = (0..bytes.div_ceil(EACH))
        .map(|i| {
            let size = EACH.min(bytes - i * EACH);
            let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("sized-{i}")},
                "data": {"bytes": "x".repeat(size)}});
            serde_json::to_vec(&cm).expect("JSON")
        })
        .collect();
    create_all(client, &format!("/api/v1/namespaces/{ns}/configmaps"), maps).await;
    let (times, _) = gets(client, &format!("/api/v1/namespaces/{ns}/configmaps"), "application/json", 10).await;
    percentile(&times, 0.5)
}

/// The "many objects" half: `n` objects of one kind loaded over HTTPS, then paged, listed
/// whole, watched, listed by kubectl, the server restarted, and the objects churned.
///
/// How each is judged, against floors of the same run:
/// - creates/s: against `GET /version` requests/s from as many clients (the HTTPS round
///   trip's floor); ≥ 0.25× (a create validates, keeps managed fields and logs durably);
/// - memory: ≤ 1.5× the stored bytes + 150 MiB (the issue's, absolute: not a speed);
/// - pages of 500: p99 across the whole range against p99 of pages of 500 of a kind
///   holding 1,000 objects; ≤ 2× (a page must not cost more for being deep in a big kind);
/// - the whole list: the server's memory growth while it is sent, against the answer's
///   size; ≤ 0.25× (streamed, not assembled);
/// - watch: p99 from a create to its event with `n` stored, against the same on the empty
///   kind before loading; ≤ 1.5×;
/// - restart after a kill: ready time beyond an empty server's start, against reading the
///   data directory's files once; ≤ 3×;
/// - churn (`n` updates over `n`/10 objects), then a clean stop: the data directory against
///   the live objects' bytes; ≤ 2× (the issue's, absolute). The store compacts by itself
///   (reported on serve's stderr) when its file is more than twice what it holds.
///
/// Measured 2026-11-26, full mode (1,000,000 objects, 834 MiB stored), release build, the
/// machine shared with three compiling helpers (load ~11), after pages learned their
/// remaining count without a walk and whole lists stopped copying their keys: every one of
/// 2,000,000 writes answered; creates 1,556/s (0.05× `GET /version`, missed); memory loaded
/// 2,134 MiB (budget 1,401, missed), 1,342 MiB after a restart (met); pages of 500 p99
/// 20 ms, p50 2.8 ms over 2,001 pages (1.76× a small kind, met; was a walk of the rest of
/// the range per page); the whole list grew the server by 135 MiB for 834 MiB sent (0.16×,
/// met); watch p99 8.1 ms against 2.2 ms empty (3.6×, missed); `kubectl get
/// --chunk-size=500` listed all 1,000,400 (in 9.9 min, kubectl's own time, 7 GiB in
/// kubectl); restart after a kill ready in 9.0 s (1.9× reading the 2.7 GiB of files, met as
/// a ratio; the 3 s missed); disk after churn 1.58× the live data (met). Quick mode
/// in the same session: pages p50 1.45 ms (was 4.3), whole-list growth 0.04× (was 0.35×).
///
/// Memory loaded, then (same day, 21:20, load about 5, the loading alone timed): resident
/// after loading 1,000,000 was 2,051 MiB, 1,337 after a restart; with `--storage memory`
/// 1,964 (1,955 with glibc's allocator instead of mimalloc, so neither redb nor the
/// allocator). A model of the collector's graph showed imbl's hash trie costing 650 bytes
/// an object at a million against 415 at 300,000; in B-trees 400 at both. With the graph in
/// B-trees and the store's keys held once: 1,674 MiB loaded (budget 1,401, missed), 1,276
/// after a restart (then read as met, wrongly: see below). What the loaded server holds
/// beyond the restarted one (about 400 MiB at a million, 30 at 300,000) was not found yet.
///
/// It is not there (2026-11-27): the restarted figure was read as soon as the server was
/// ready, while its garbage collector was still building its graph from a full list; at
/// 300,000 the build was over by then, at a million not. Read once resident memory stops
/// growing (as the bench now does), the restarted server holds 1,721 MiB, the loaded one
/// 1,666 (a load-only run, release build, glibc and mimalloc alike). A heap profile of the
/// load (heaptrack, system allocator; 1.53 GiB live at the end) splits it: the stored
/// values 847 MB (the objects' JSON, one allocation each), the store's B-tree of current
/// keys 212 MB (imbl's nodes are about 42% full after inserts in key order: 114 bytes a
/// 48-byte entry, measured apart), the collector's graph about 340 MB (every object's key,
/// uid and namespace in three B-trees), the rest under 25 MB each. So the budget (1,401)
/// is missed by the graph: it holds every object, where only owners, dependents, objects
/// with finalizers and those being deleted need a node (an owner can be looked up by its
/// reference, and a namespace's objects listed per kind, as kube's collector and
/// namespace controller do).
///
/// Then, creates (2026-11-27, 200,000 objects, release build, two cores shared with a
/// compiling helper; builds alternated). A profile of the load (perf, 200,000) put the
/// server's CPU in: the create's own work 23% (managed fields 9, schema validation 4.5,
/// pruning and defaults 3), TLS 10.5, the collector's watch handler 7 (its graph's imbl
/// inserts; left to the collector's redesign), the committer 12 (mostly the log's write
/// and fdatasync), the checkpointer 11, of which 8 were compactions of the redb file in
/// the middle of the load: redb doubles a growing file, so it looked more than half free,
/// and each compaction walked and moved every page (O(stored), and the longer the file,
/// the longer the committer waits on a full hand-off). The checkpointer now weighs and
/// compacts the file only after a churn (at least half as many bytes replaced or deleted
/// as written since the last look), and the namespace admission reads the namespace's
/// deletion timestamp from its stored bytes (its whole decode was 4%). Per-thread CPU at
/// the end of loading 200,000: checkpointer 6.6 s → 1.4 s, the whole server 31.9 s →
/// 28.6 s (160 → 143 µs a create). creates/s too noisy to judge on this machine: 3,473 →
/// 8,814/s in the cleanest pair (0.11× → 0.19× `GET /version`, still missed), 5,320 →
/// 2,806 in one where the other helper's build ran during the second (its `GET /version`
/// floor halved, 0.12× → 0.11×). Watch p99 against the empty kind was met in all six runs
/// at 200,000 (0.4× to 0.9×) but for one of the new build's (3.5×, 11.4 ms against 3.2):
/// 200 samples' p99 is the second worst, and on two shared cores it is scheduling noise;
/// a profile of the watch phase shows almost no server CPU (a create a round trip). The
/// 1,000,000 run's 3.6× was probably compaction (a compaction of a GiB file running into
/// the watch's measurement); not re-measured at a million (no time).
///
/// Then (same day, 03:14, `SCALE_MEMORY_ONLY=1`, release build, two helpers compiling
/// beside it), with the collector keeping a node only for objects with owners, objects
/// being deleted and namespaces, every uid in a counted set (16 bytes for a canonical
/// UUID), and a namespace's content listed per kind from the store when it is deleted:
/// 1,000,000 loaded at 3,304/s; resident 1,311 MiB loaded (was 1,666) and 1,359 after a
/// restart (was 1,721), both read once settled: **both within the budget of 1,401 MiB**.
/// With the store's current keys holding a pointer to each entry rather than the entry
/// (03:36, same conditions): loaded at 2,436/s; 1,235 MiB loaded, 1,293 after a restart.
///
/// The whole half at 1,000,000 with everything above merged (same day, 04:19–04:40, the
/// machine quiet: load about 2): every one of 2,000,000 writes answered; creates 9,205/s
/// (0.19× `GET /version` at 47,947/s, missed; the 10,000/s nearly); memory 1,175
/// MiB loaded, 1,288 after a restart (met); pages of 500 p99 5.54 ms, p50 1.76 (0.79× a
/// small kind, met); the whole list grew the server 134 MiB for 834 MiB sent (0.16×, met);
/// **watch p99 1.55 ms against 1.12 empty (1.38×, met; was 3.6×)**; `kubectl get
/// --chunk-size=500` listed all 1,000,400 in 7.9 min; restart after a kill ready in 4.4 s
/// (1.5× reading the files, met; the 3 s missed); disk after churn 1.57× (met).
///
/// Then, the restart (2026-11-27, 09:15–09:33, `SCALE_MEMORY_ONLY=1`, which now prints
/// it). A profile of a restart at 300,000 put a fifth of its CPU in redb's repair of a
/// file a killed process left open: walking every page to checksum it and rebuild the
/// allocator's state. Durable commits now record that state (redb's quick repair), which
/// the reopen loads instead. Builds alternated: at 300,000 ready in 1,065 and 609 ms
/// against 1,296 and 1,075 before; at 1,000,000 in 3,760 and 2,185 ms against 4,396 and
/// 4,259 (the 3 s met in one run of two), loading at 5,774 and 13,148/s against
/// 9,612 and 13,236 (the same within this machine's noise: a checkpoint's second fsync is
/// off the write path). Memory unchanged: 1,187 MiB loaded and 1,294 after the restart.
///
/// The whole half at 1,000,000 with this session's work (same day, 10:09–10:28, the
/// machine quiet): every one of 2,000,000 writes answered; creates 13,072/s (the issue's
/// 10,000/s met; 0.19× `GET /version`, whose floor also rose to 68,870/s, missed); memory
/// 1,184 MiB loaded, 1,289 after a restart (met); pages of 500 p99 4.61 ms, p50 1.17 (the
/// issue's 5 ms met; 2.37× a small kind's 1.94 ms, missed); the whole list grew the server
/// 130 MiB for 834 MiB sent (0.16×, met); watch p99 1.12 ms against 1.03 empty (1.09×,
/// met); `kubectl get --chunk-size=500` listed all 1,000,400 in 7.8 min; **restart after a
/// kill ready in 2.48 s (the 3 s met; 1.0× reading the files)**; disk after churn
/// 1.56× (met).
///
/// Pages of 500 looked at closely (2026-11-27, quick mode, three runs, one paging five
/// times 3 s apart): p50 1.3–2.0 ms, as the small kind's; p99 over 101 pages is the slowest
/// page or two, which was 2.4–13 ms from one pass to the next, the slow page somewhere
/// else each time (page 95 once, none the next): the scheduling of two shared cores, not a
/// page's depth in the kind. The verdict went with it: 1.11× (met), 2.50× and 5.70×.
async fn objects(n: usize) {
    use objects::{create_generation, update_generation};
    const WRITERS: usize = 16;
    let mut served = served::serve();
    let empty_start = served.ready_after;
    let pid = served.child.id();
    let kubeconfig = served.dir.path().join("kubeconfig");
    let client = served::connect(&kubeconfig, None).await;
    println!("scale: {n} objects of one kind over HTTPS on {} ({WRITERS} writers)", served.addr);
    objects::create_kind(&client, "loads", "Load").await;
    objects::create_kind(&client, "smalls", "Small").await;
    let small = objects::write(&client, "smalls", "Small", 0..1_000, create_generation, usize::MAX, WRITERS).await;
    assert_eq!(small.errors, 0, "{:?}", small.first_error);
    let (_, small_pages) = objects::page_through(&client, "smalls", 500).await;
    let mut small_page_times = Vec::new();
    for _ in 0..50 {
        small_page_times.extend(objects::page_through(&client, "smalls", 500).await.1);
    }
    small_page_times.sort();
    drop(small_pages);
    let watch_empty = objects::watch_latency(&client, "loads", "Load", n + 1_000, 200).await;
    let version_rate = {
        let start = Instant::now();
        let tasks: Vec<_> = (0..WRITERS)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move {
                    for _ in 0..500 {
                        get(&client, "/version", "application/json").await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("client");
        }
        (WRITERS * 500) as f64 / start.elapsed().as_secs_f64()
    };
    let idle = rss_mib(pid);

    let loaded = objects::write(&client, "loads", "Load", 0..n, create_generation, usize::MAX, WRITERS).await;
    let create_rate = loaded.count as f64 / loaded.took.as_secs_f64();
    let rss_loaded = settled_rss_mib(pid);
    let stored_mib = loaded.answered_bytes as f64 / 1048576.0;
    if std::env::var_os("SCALE_MEMORY_ONLY").is_some() {
        // Memory work needs only these two figures: spare the half hour the rest takes.
        let restart = served.restart();
        let rss_restarted = settled_rss_mib(served.child.id());
        println!(
            "  loaded {} of {n} in {} ({create_rate:.0}/s); ready again {} after a kill",
            loaded.count,
            ms(loaded.took),
            ms(restart)
        );
        memory_verdicts(rss_loaded, idle, rss_restarted, stored_mib);
        return;
    }

    let (names, mut page_times) = objects::page_through(&client, "loads", 500).await;
    page_times.sort();
    let pages_complete = names.len() == n + 200 && names.windows(2).all(|w| w[0] < w[1]);

    let before_list = rss_mib(pid);
    let mut peak = before_list;
    let (list_bytes, list_items, list_took) =
        objects::read_whole_list(&client, "loads", || peak = peak.max(rss_mib(pid))).await;
    let list_growth = peak - before_list;

    let watch_full = objects::watch_latency(&client, "loads", "Load", n + 2_000, 200).await;

    let kubectl_start = Instant::now();
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .env("KUBECACHEDIR", served.dir.path().join(".kube-cache"))
        .args(["get", "loads", "--chunk-size=500", "-o", "name"])
        .output()
        .expect("kubectl");
    let kubectl_took = kubectl_start.elapsed();
    let kubectl_count = String::from_utf8_lossy(&out.stdout).lines().count();

    let files_floor = {
        let start = Instant::now();
        let mut bytes = 0;
        for path in data_files(served.dir.path()) {
            bytes += std::fs::read(&path).map(|b| std::hint::black_box(b).len()).unwrap_or(0);
        }
        (start.elapsed(), bytes)
    };
    let restart = served.restart();
    let pid = served.child.id();
    let client = served::connect(&kubeconfig, None).await;
    let rss_restarted = settled_rss_mib(pid);
    let (after_restart, _) = objects::page_through(&client, "loads", 500).await;

    let churn = objects::write(&client, "loads", "Load", 0..n, update_generation, (n / 10).max(1), WRITERS).await;
    let live_bytes = churn.answered_bytes as f64 / churn.count.max(1) as f64 * (n + 400) as f64;
    // A clean stop: the last checkpoint, and the compaction it may call for.
    let stopped = std::process::Command::new("kill").args(["-TERM", &served.child.id().to_string()]).status();
    assert!(stopped.is_ok_and(|s| s.success()), "SIGTERM to serve");
    let _ = served.child.wait();
    let disk: u64 =
        data_files(served.dir.path()).iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();

    let p = |d: &[Duration], q: f64| percentile(d, q);
    println!(
        "  floors: GET /version {version_rate:.0}/s from {WRITERS} clients; pages of 500 of 1,000 objects p99 {}; reading the data files ({:.0} MiB) {}",
        ms(p(&small_page_times, 0.99)),
        files_floor.1 as f64 / 1048576.0,
        ms(files_floor.0)
    );
    println!("  {:<44} {:<28} {:<44} verdict", "figure", "measured", "judged as (target)");
    let errors = loaded.errors + churn.errors;
    verdict(
        "writes without error",
        format!("{} of {}", loaded.count + churn.count, 2 * n),
        format!("first error: {:?}", loaded.first_error.or(churn.first_error)),
        errors == 0,
    );
    let r = create_rate / version_rate;
    verdict(
        "creates/s",
        format!("{create_rate:.0}/s"),
        format!("{r:.2}× GET /version (≥ 0.25×); issue: ≥ 10,000/s"),
        r >= 0.25,
    );
    memory_verdicts(rss_loaded, idle, rss_restarted, stored_mib);
    let r = ratio(p(&page_times, 0.99), p(&small_page_times, 0.99));
    verdict(
        "pages of 500 p99",
        format!("{} (p50 {}, {} pages)", ms(p(&page_times, 0.99)), ms(p(&page_times, 0.5)), page_times.len()),
        format!("{r:.2}× in a small kind (≤ 2×); issue: ≤ 5 ms"),
        r <= 2.0,
    );
    verdict(
        "pages cover every object once, in order",
        format!("{} names", names.len()),
        "all, sorted".into(),
        pages_complete,
    );
    let r = list_growth / (list_bytes as f64 / 1048576.0);
    verdict(
        "whole list: memory growth while sent",
        format!("{list_growth:.0} MiB for {:.0} MiB in {}", list_bytes as f64 / 1048576.0, ms(list_took)),
        format!("{r:.2}× the answer (≤ 0.25×)"),
        r <= 0.25 && list_items == n + 200,
    );
    let r = ratio(p(&watch_full, 0.99), p(&watch_empty, 0.99));
    verdict(
        "watch create→event p99",
        format!("{} (empty kind {})", ms(p(&watch_full, 0.99)), ms(p(&watch_empty, 0.99))),
        format!("{r:.2}× on the empty kind (≤ 1.5×)"),
        r <= 1.5,
    );
    verdict(
        "kubectl get --chunk-size=500",
        format!("{kubectl_count} names in {}", ms(kubectl_took)),
        format!("all {} (correctness)", n + 400),
        kubectl_count == n + 400,
    );
    let r = ratio(restart.saturating_sub(empty_start), files_floor.0);
    verdict(
        "restart after a kill: ready",
        format!("{} (empty: {})", ms(restart), ms(empty_start)),
        format!("{r:.1}× reading the files, beyond the empty start (≤ 3×); issue: ≤ 3 s"),
        r <= 3.0,
    );
    verdict(
        "every object there after the restart",
        format!("{} names", after_restart.len()),
        format!("{} (correctness)", n + 400),
        after_restart.len() == n + 400,
    );
    let r = disk as f64 / live_bytes;
    verdict(
        "disk after churn and a clean stop",
        format!("{:.0} MiB for {:.0} MiB live", disk as f64 / 1048576.0, live_bytes / 1048576.0),
        format!("{r:.2}× the live data (≤ 2×)"),
        r <= 2.0,
    );
}

/// Resident memory once loaded and after a restart, against the budget.
fn memory_verdicts(loaded: f64, idle: f64, restarted: f64, stored_mib: f64) {
    let budget = 1.5 * stored_mib + 150.0;
    verdict(
        "resident memory loaded",
        format!("{loaded:.0} MiB ({idle:.0} idle)"),
        format!("≤ 1.5 × {stored_mib:.0} MiB stored + 150 = {budget:.0} MiB"),
        loaded <= budget,
    );
    verdict(
        "resident memory after restart",
        format!("{restarted:.0} MiB"),
        format!("≤ {budget:.0} MiB"),
        restarted <= budget,
    );
}

/// The store's files in a data directory: the redb file and the log's segments.
fn data_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![dir.join("store.redb")];
    if let Ok(entries) = std::fs::read_dir(dir.join("store.redb.wal")) {
        files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
    }
    files
}
