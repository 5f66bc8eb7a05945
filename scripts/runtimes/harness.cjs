#!/usr/bin/env node
// wirelens' timing harness for Node: times each library's encode and decode of the payload
// files wirelens wrote, and streams raw samples back as JSON lines on standard output.
//
// Run by `wirelens compare --runtime node` (the binary carries a copy of this file and writes it
// to a temporary folder); by hand: `node harness.cjs JOB.json`, or `node harness.cjs --probe`
// to list the runtime and which packages are installed (no timing). The job and the lines out are
// those of harness.py: runtime, library (ok | missing | failed, with the library's version and
// the size and SHA-256 of its own encoding), samples (batch and per-sample totals in ns), done.
// Packages are looked up as `require` does, then in the current folder's node_modules (the
// folder wirelens was started in). Every library is checked before it is timed: it decodes the
// payload, encodes what it read, and must read its own bytes back as the same data. The clock is
// process.hrtime.bigint (monotonic). When the job asks for "compressors", each codec the zlib
// module has (gzip and brotli; zstd where zlib.zstdCompressSync exists, Node 22.15 and newer)
// compresses and decompresses each format's file, as harness.py's compressor lines say. Avro
// (avsc) reads and writes by the schema wirelens' Avro bytes were written with (the job's
// avro_schema, an .avsc file beside the payload). When the job's settings ask for "all_cores"
// workers, each operation is also run on that many worker threads at once for span_ns, each
// thread with its own copy of the library, the value and the bytes (prepared in the thread),
// started together; the samples line's "spread" lists what each did (calls, ns, and its thread's
// CPU time where process.threadCpuUsage exists, Node 23.9 and newer).
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const util = require('util');

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function load(name) {
  try {
    return require(name);
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    return require(require.resolve(name, { paths: [process.cwd(), path.join(process.cwd(), 'node_modules')] }));
  }
}

function versionOf(name) {
  for (const base of [undefined, process.cwd()]) {
    try {
      const opts = base ? { paths: [base] } : undefined;
      const main = require.resolve(name, opts);
      let dir = path.dirname(main);
      for (let i = 0; i < 6; i++) {
        const pj = path.join(dir, 'package.json');
        if (fs.existsSync(pj)) {
          const p = JSON.parse(fs.readFileSync(pj, 'utf8'));
          if (p.name === name) return p.version;
        }
        dir = path.dirname(dir);
      }
    } catch (e) {
      // try the next base
    }
  }
  return 'unknown';
}

const LIBRARIES = [
  ['json', 'JSON', null, () => ({
    version: `built in (Node ${process.versions.node})`,
    decode: (b) => JSON.parse(b.toString('utf8')),
    encode: (o) => Buffer.from(JSON.stringify(o), 'utf8'),
  })],
  ['msgpack', '@msgpack/msgpack', '@msgpack/msgpack', () => {
    const m = load('@msgpack/msgpack');
    return { version: versionOf('@msgpack/msgpack'), decode: (b) => m.decode(b), encode: (o) => m.encode(o) };
  }],
  ['msgpack', 'msgpackr', 'msgpackr', () => {
    const m = load('msgpackr');
    const p = new m.Packr({ useRecords: false });
    return { version: versionOf('msgpackr'), decode: (b) => p.unpack(b), encode: (o) => p.pack(o) };
  }],
  ['cbor', 'cbor-x', 'cbor-x', () => {
    const m = load('cbor-x');
    const e = new m.Encoder({ useRecords: false });
    return { version: versionOf('cbor-x'), decode: (b) => e.decode(b), encode: (o) => e.encode(o) };
  }],
  ['protobuf', 'protobufjs', 'protobufjs', (job) => {
    const pb = load('protobufjs');
    const descriptor = load('protobufjs/ext/descriptor');
    const root = pb.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(fs.readFileSync(job.descriptor_set)));
    const type = root.lookupType(job.message);
    return {
      version: versionOf('protobufjs'),
      decode: (b) => type.decode(b),
      encode: (m) => type.encode(m).finish(),
      same: (a, b) => util.isDeepStrictEqual(type.toObject(a, { longs: String, bytes: String }), type.toObject(b, { longs: String, bytes: String })),
    };
  }],
  ['avro', 'avsc', 'avsc', (job) => {
    const avro = load('avsc');
    const schema = JSON.parse(fs.readFileSync(job.avro_schema, 'utf8'));
    const version = versionOf('avsc');
    // avsc reads a long as a JS number, and refuses one past 2^53 ("potential precision loss")
    // rather than change it: what most avsc users run. A payload with such integers is read
    // with a long type of BigInts instead (the library's documented way), and the version says
    // so, since BigInts cost more than numbers.
    const plain = avro.Type.forSchema(schema);
    try {
      plain.fromBuffer(fs.readFileSync(job.files.avro));
      return { version, decode: (b) => plain.fromBuffer(b), encode: (v) => plain.toBuffer(v) };
    } catch (e) {
      if (!/precision loss/.test(String(e && e.message))) throw e;
    }
    const big = avro.Type.forSchema(schema, { registry: { long: bigLong(avro) } });
    return {
      version: `${version} (longs as BigInt: the payload has integers past 2^53)`,
      decode: (b) => big.fromBuffer(b),
      encode: (v) => big.toBuffer(v),
    };
  }],
];

// An avsc long type of BigInts: every 64-bit integer kept exactly (avsc hands it the 8 bytes,
// little-endian, two's complement).
function bigLong(avro) {
  return avro.types.LongType.__with({
    fromBuffer: (buf) => buf.readBigInt64LE(0),
    toBuffer: (n) => {
      const buf = Buffer.alloc(8);
      buf.writeBigInt64LE(BigInt(n));
      return buf;
    },
    fromJSON: (v) => BigInt(v),
    toJSON: (n) => (Number.isSafeInteger(Number(n)) ? Number(n) : String(n)),
    isValid: (n) => (typeof n === 'bigint' && BigInt.asIntN(64, n) === n) || Number.isSafeInteger(n),
    compare: (a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0),
  });
}

function measure(fn, arg, s) {
  const clock = process.hrtime.bigint;
  const warmUntil = clock() + BigInt(s.warm_up_ns);
  for (;;) {
    fn(arg);
    if (clock() >= warmUntil) break;
  }
  // The batch doubles until one batch lasts a sample's time.
  let batch = 1;
  let took;
  for (;;) {
    const t0 = clock();
    for (let j = 0; j < batch; j++) fn(arg);
    took = Number(clock() - t0);
    if (took >= s.sample_ns || took >= s.slow_ns) break;
    batch *= 2;
  }
  const perCall = Math.max(took / batch, 1);
  let n;
  if (perCall >= s.slow_ns) {
    batch = 1;
    n = s.slow_samples;
  } else {
    const fit = Math.floor(s.measurement_ns / (perCall * batch));
    n = Math.max(s.min_samples, Math.min(s.max_samples, fit));
  }
  const samples = [];
  // Node has no thread CPU clock: process.cpuUsage() is the process's (user + system), which
  // includes the runtime's own helper threads (the garbage collector's among them).
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t0 = clock();
    for (let j = 0; j < batch; j++) fn(arg);
    samples.push(Number(clock() - t0));
  }
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) * 1000;
  // Tail latency: single calls (a slow operation's samples are single calls already).
  const calls = batch === 1 ? samples.slice() : [];
  if (batch > 1 && s.latency_calls) {
    const k = Math.max(1, Math.min(s.latency_calls, Math.floor(s.latency_ns / perCall)));
    for (let i = 0; i < k; i++) {
      const t0 = clock();
      fn(arg);
      calls.push(Number(clock() - t0));
    }
  }
  return { batch, samples, cpu, calls };
}

// codec, and its compress and decompress at wirelens' levels (or why it is not there).
function codecs(levels) {
  const zlib = require('zlib');
  const version = `built in zlib (Node ${process.versions.node}, zlib ${process.versions.zlib})`;
  const c = zlib.constants;
  const out = [
    ['gzip', () => ({
      version,
      compress: (b) => zlib.gzipSync(b, { level: levels.gzip ?? 6 }),
      decompress: (b) => zlib.gunzipSync(b),
    })],
    ['brotli', () => ({
      version,
      compress: (b) => zlib.brotliCompressSync(b, { params: {
        [c.BROTLI_PARAM_QUALITY]: levels.brotli ?? 6,
        [c.BROTLI_PARAM_LGWIN]: levels.brotli_window ?? 22,
        [c.BROTLI_PARAM_SIZE_HINT]: b.length,
      } }),
      decompress: (b) => zlib.brotliDecompressSync(b),
    })],
    ['zstd', () => {
      if (typeof zlib.zstdCompressSync !== 'function') {
        throw new Error(`Node ${process.versions.node} has no zlib.zstdCompressSync (Node 22.15 or newer has)`);
      }
      return {
        version,
        compress: (b) => zlib.zstdCompressSync(b, { params: { [c.ZSTD_c_compressionLevel]: levels.zstd ?? 3 } }),
        decompress: (b) => zlib.zstdDecompressSync(b),
      };
    }],
  ];
  return out;
}

function compressors(job, s) {
  for (const [codec, make] of codecs(job.levels || {})) {
    let lib;
    try {
      lib = make();
    } catch (e) {
      for (const format of Object.keys(job.files)) {
        emit({ type: 'compressor', format, codec, library: 'zlib', status: 'missing', version: null, message: String(e && e.message) });
      }
      continue;
    }
    for (const [format, file] of Object.entries(job.files)) {
      const row = { type: 'compressor', format, codec, library: 'zlib', version: lib.version };
      const payload = fs.readFileSync(file);
      let packed;
      try {
        packed = lib.compress(payload);
        if (!lib.decompress(packed).equals(payload)) throw new Error('decompressed bytes differ from the file');
      } catch (e) {
        emit({ ...row, status: 'failed', message: String(e && e.message) });
        continue;
      }
      emit({ ...row, status: 'ok', bytes: packed.length });
      for (const [op, fn, arg] of [['compress', lib.compress, payload], ['decompress', lib.decompress, packed]]) {
        const { batch, samples, cpu, calls } = measure(fn, arg, s);
        emit({ type: 'samples', format, library: codec, op, batch, ns: samples, cpu_ns: cpu, calls });
      }
    }
  }
}

function emitRuntime() {
  emit({ type: 'runtime', runtime: 'node', version: process.versions.node, implementation: `V8 ${process.versions.v8}`, executable: process.execPath });
}

// Which packages are installed, with their versions (nothing is timed).
function probe() {
  emitRuntime();
  for (const [format, name, pkg] of LIBRARIES) {
    const row = { type: 'library', format, library: name };
    if (pkg === null) {
      emit({ ...row, status: 'ok', version: `built in (Node ${process.versions.node})` });
      continue;
    }
    try {
      load(pkg);
      emit({ ...row, status: 'ok', version: versionOf(pkg) });
    } catch (e) {
      if (e && e.code === 'MODULE_NOT_FOUND') {
        emit({ ...row, status: 'missing', version: null, install: `npm install ${pkg}`, message: String(e.message).split('\n')[0] });
      } else {
        emit({ ...row, status: 'failed', version: null, message: String(e && e.message) });
      }
    }
  }
  emit({ type: 'done' });
}

// Every core at once: `workers` worker threads each prepare their own copy of the library and
// the payload, then call the operation for span_ns from a shared start. The main thread waits
// on shared memory (no event loop needed), with a deadline; an empty list where a worker fails.
function spread(job, format, name, op, s) {
  const cfg = s.all_cores || {};
  const workers = cfg.workers | 0;
  const span = Number(cfg.span_ns || 0);
  if (workers < 2 || span <= 0) return [];
  const { Worker } = require('worker_threads');
  // ctl: [0] workers ready, [1] go, [2] workers done, [3] workers failed.
  const ctl = new Int32Array(new SharedArrayBuffer(16));
  const out = new Float64Array(new SharedArrayBuffer(8 * 3 * workers));
  const threads = [];
  for (let i = 0; i < workers; i++) {
    threads.push(new Worker(__filename, {
      workerData: { spread: true, job, format, name, op, span, warm: s.warm_up_ns, i, ctl: ctl.buffer, out: out.buffer },
    }));
  }
  const deadline = Date.now() + 60000 + span / 1e6;
  const waitFor = (slot, n) => {
    for (;;) {
      const seen = Atomics.load(ctl, slot);
      if (seen >= n || Atomics.load(ctl, 3) > 0 || Date.now() > deadline) return seen >= n;
      Atomics.wait(ctl, slot, seen, 200);
    }
  };
  let ok = waitFor(0, workers);
  Atomics.store(ctl, 1, 1);
  Atomics.notify(ctl, 1);
  ok = ok && waitFor(2, workers);
  for (const t of threads) t.terminate();
  if (!ok) return [];
  const runs = [];
  for (let i = 0; i < workers; i++) {
    const cpu = out[3 * i + 2];
    runs.push({ calls: out[3 * i], ns: out[3 * i + 1], cpu_ns: cpu >= 0 ? cpu : null });
  }
  return runs;
}

// One worker thread of `spread`.
function spreadWorker(d) {
  const ctl = new Int32Array(d.ctl);
  const out = new Float64Array(d.out);
  try {
    const entry = LIBRARIES.find(([format, name]) => format === d.format && name === d.name);
    const lib = entry[3](d.job);
    const value = lib.decode(fs.readFileSync(d.job.files[d.format]));
    const own = Buffer.from(lib.encode(value));
    const [fn, arg] = d.op === 'encode' ? [lib.encode, value] : [lib.decode, own];
    // Warmed up as the one-thread measurement is: a new thread's code starts cold.
    const warmUntil = process.hrtime.bigint() + BigInt(d.warm || 0);
    do fn(arg); while (process.hrtime.bigint() < warmUntil);
    Atomics.add(ctl, 0, 1);
    Atomics.notify(ctl, 0);
    while (Atomics.load(ctl, 1) === 0) Atomics.wait(ctl, 1, 0, 200);
    const clock = process.hrtime.bigint;
    const thread = typeof process.threadCpuUsage === 'function';
    const cpu0 = thread ? process.threadCpuUsage() : null;
    const t0 = clock();
    const end = t0 + BigInt(d.span);
    let calls = 0;
    let now;
    for (;;) {
      fn(arg);
      calls++;
      now = clock();
      if (now >= end) break;
    }
    out[3 * d.i] = calls;
    out[3 * d.i + 1] = Number(now - t0);
    if (thread) {
      const used = process.threadCpuUsage(cpu0);
      out[3 * d.i + 2] = (used.user + used.system) * 1000;
    } else {
      out[3 * d.i + 2] = -1;
    }
    Atomics.add(ctl, 2, 1);
    Atomics.notify(ctl, 2);
  } catch (e) {
    Atomics.add(ctl, 3, 1);
    Atomics.notify(ctl, 0);
    Atomics.notify(ctl, 2);
  }
}

function main() {
  if (process.argv[2] === '--probe') {
    probe();
    return;
  }
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const s = job.settings;
  emitRuntime();
  for (const [format, name, pkg, make] of LIBRARIES) {
    if (job.libraries && !job.libraries.includes(name)) continue;
    const file = job.files[format];
    if (file === undefined || file === null) continue;
    if (format === 'protobuf' && !job.descriptor_set) continue;
    if (format === 'avro' && !job.avro_schema) continue;
    const row = { type: 'library', format, library: name };
    let lib;
    try {
      lib = make(job);
    } catch (e) {
      if (e && e.code === 'MODULE_NOT_FOUND') {
        emit({ ...row, status: 'missing', version: null, install: `npm install ${pkg}`, message: String(e.message).split('\n')[0] });
      } else {
        emit({ ...row, status: 'failed', version: null, message: String(e && e.message) });
      }
      continue;
    }
    row.version = lib.version;
    const payload = fs.readFileSync(file);
    let value;
    let own;
    try {
      value = lib.decode(payload);
      own = Buffer.from(lib.encode(value));
      const back = lib.decode(own);
      const same = lib.same ? lib.same(back, value) : util.isDeepStrictEqual(back, value);
      if (!same) throw new Error('its own bytes read back as different data');
    } catch (e) {
      emit({ ...row, status: 'failed', message: `round trip: ${e && e.message}` });
      continue;
    }
    emit({ ...row, status: 'ok', bytes: own.length, sha256: crypto.createHash('sha256').update(own).digest('hex') });
    for (const [op, fn, arg] of [['encode', lib.encode, value], ['decode', lib.decode, own]]) {
      const { batch, samples, cpu, calls } = measure(fn, arg, s);
      const runs = spread(job, format, name, op, s);
      emit({ type: 'samples', format, library: name, op, batch, ns: samples, cpu_ns: cpu, calls, spread: runs });
    }
  }
  if (job.compressors) compressors(job, s);
  emit({ type: 'done' });
}

const workerThreads = require('worker_threads');
if (!workerThreads.isMainThread && workerThreads.workerData && workerThreads.workerData.spread) {
  spreadWorker(workerThreads.workerData);
} else {
  main();
}
