//! The profiler's terminal report: sizes, where the bytes go, timings, scaling and transfer,
//! one block per input, in plain aligned text.

use std::io::{self, Write};

use crate::profile::bench::Measurement;
use crate::profile::report::{FileReport, Report};
use crate::profile::sweep::Sweep;

/// How many field patterns to list per format.
pub const TOP_FIELDS: usize = 6;

/// A duration in nanoseconds, human-sized (`812 ns`, `14.2 µs`, `3.41 ms`, `1.20 s`).
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn opt_size(v: Option<usize>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

fn pct(part: usize, total: usize) -> String {
    if total == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / total as f64)
    }
}

/// A variant's size against its format's default: `−4 bytes (−5.0%)`, `+2 bytes (+0.1%)` or
/// `same size`.
pub fn saving(delta: i64, default: usize) -> String {
    if delta == 0 {
        return "same size".into();
    }
    let sign = if delta < 0 { '−' } else { '+' };
    let pct = if default == 0 {
        String::new()
    } else {
        format!(
            " ({sign}{:.1}%)",
            delta.unsigned_abs() as f64 * 100.0 / default as f64
        )
    };
    format!("{sign}{} bytes{pct}", group(delta.unsigned_abs()))
}

/// `63524` as `63,524`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A measurement's tail and CPU cells: p99, p99.9, calls timed one by one, CPU time per
/// operation; `-` for what was not measured (too few calls for a percentile, no CPU clock).
pub fn tail_cells(m: Option<&Measurement>) -> [String; 4] {
    let d = |v: Option<f64>| v.map_or("-".to_string(), duration);
    match m {
        None => ["-".into(), "-".into(), "-".into(), "-".into()],
        Some(m) => [
            d(m.latency.and_then(|l| l.p99)),
            d(m.latency.and_then(|l| l.p999)),
            m.latency.map_or("-".into(), |l| l.n.to_string()),
            d(m.cpu_ns_per_op),
        ],
    }
}

/// The tail latency of each Rust row (calls timed one by one) and its CPU time per operation
/// beside the median wall time: p99 and p99.9 are `-` until enough calls were timed (100 and
/// 1,000), and the call count says how many there were.
fn write_tails(out: &mut dyn Write, file: &FileReport) -> io::Result<()> {
    let measured: Vec<_> = file.timings.iter().filter(|r| r.error.is_none()).collect();
    if measured.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\ntail latency (single calls: p99, p99.9 and how many were timed) and CPU time per op (thread clock):"
    )?;
    writeln!(
        out,
        "  {:<12} {:<14} {:>10} {:>10} {:>6} {:>10}   {:>10} {:>10} {:>6} {:>10}",
        "format", "library", "enc p99", "p99.9", "calls", "CPU", "dec p99", "p99.9", "calls", "CPU"
    )?;
    for r in measured {
        let [ep99, ep999, en, ecpu] = tail_cells(r.encode.as_ref());
        let [dp99, dp999, dn, dcpu] = tail_cells(r.decode.as_ref());
        writeln!(
            out,
            "  {:<12} {:<14} {ep99:>10} {ep999:>10} {en:>6} {ecpu:>10}   {dp99:>10} {dp999:>10} {dn:>6} {dcpu:>10}",
            r.format.title(),
            r.library.name(),
        )?;
    }
    Ok(())
}

/// A measurement's throughput cells: operations per second on one thread (from the median),
/// on every core, and how many times the first the second is (`4 × 1.9`: four threads, 1.9
/// times one thread's rate); `-` for what was not measured.
pub fn throughput_cells(m: Option<&Measurement>) -> [String; 3] {
    let rate = |ops: f64| format!("{}/s", group(ops.round() as u64));
    let Some(m) = m else {
        return ["-".into(), "-".into(), "-".into()];
    };
    let one = (m.ns.median > 0.0).then(|| 1e9 / m.ns.median);
    let all = m.all_cores;
    [
        one.map_or("-".into(), rate),
        all.map_or("-".into(), |a| rate(a.ops_per_s)),
        all.and_then(|a| Some(format!("{} × {:.1}", a.threads, a.scaling(m.ns.median)?)))
            .unwrap_or_else(|| "-".into()),
    ]
}

/// Each row's operations per second on one thread and with every core at once (each thread,
/// or in Python each process, with its own copy of the input), where that was measured: the
/// Rust rows, then each other runtime's.
fn write_all_cores(out: &mut dyn Write, file: &FileReport) -> io::Result<()> {
    let any = |e: &Option<Measurement>, d: &Option<Measurement>| {
        [e, d]
            .iter()
            .any(|m| m.as_ref().is_some_and(|m| m.all_cores.is_some()))
    };
    let mut measured: Vec<(String, &str, &Option<Measurement>, &Option<Measurement>)> = file
        .timings
        .iter()
        .filter(|r| any(&r.encode, &r.decode))
        .map(|r| {
            (
                r.format.title().to_string(),
                r.library.name(),
                &r.encode,
                &r.decode,
            )
        })
        .collect();
    for rt in &file.runtimes {
        measured.extend(
            rt.rows
                .iter()
                .filter(|r| any(&r.encode, &r.decode))
                .map(|r| {
                    (
                        format!("{} {}", rt.runtime.title(), r.format.title()),
                        r.library.as_str(),
                        &r.encode,
                        &r.decode,
                    )
                }),
        );
    }
    if measured.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nthroughput: one thread, every core at once (each thread, or Python process, with its \
         own copy of the input), workers × gain:"
    )?;
    writeln!(
        out,
        "  {:<18} {:<14} {:>13} {:>13} {:>9}   {:>13} {:>13} {:>9}",
        "format",
        "library",
        "enc 1 thread",
        "all cores",
        "gain",
        "dec 1 thread",
        "all cores",
        "gain"
    )?;
    for (format, library, encode, decode) in measured {
        let [e1, en, eg] = throughput_cells(encode.as_ref());
        let [d1, dn, dg] = throughput_cells(decode.as_ref());
        writeln!(
            out,
            "  {format:<18} {library:<14} {e1:>13} {en:>13} {eg:>9}   {d1:>13} {dn:>13} {dg:>9}",
        )?;
    }
    Ok(())
}

/// `median [ci_low – ci_high]`, with `*` when measured while other jobs ran; `-` when missing;
/// `time [1 sample]` when one sample is all there is (the quick mode's budget for a slow
/// operation), which has no interval to show.
pub fn timing(m: Option<&Measurement>) -> String {
    match m {
        None => "-".into(),
        Some(m) if m.ns.n == 1 => format!(
            "{} [1 sample]{}",
            duration(m.ns.median),
            if m.concurrent { "*" } else { "" }
        ),
        Some(m) => format!(
            "{} [{} – {}]{}",
            duration(m.ns.median),
            duration(m.ns.ci_low),
            duration(m.ns.ci_high),
            if m.concurrent { "*" } else { "" }
        ),
    }
}

/// `bytes` per second of the median, in MB/s (10^6); `-` when missing.
pub fn rate(m: Option<&Measurement>, bytes: usize) -> String {
    match m {
        Some(m) if m.ns.median > 0.0 => {
            format!("{:.0}", bytes as f64 / (m.ns.median / 1e9) / 1e6)
        }
        _ => "-".into(),
    }
}

fn allocs(m: Option<&Measurement>) -> String {
    match m.and_then(|m| m.allocs_per_op) {
        Some(a) => format!("{a:.0}"),
        None => "n/c".into(),
    }
}

/// Writes the whole report.
pub fn write_report(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(
        out,
        "mode: {}{}; allocations {}",
        report.mode.name(),
        if report.parallel {
            " (jobs in parallel; * = measured while other jobs ran)"
        } else {
            " (one timing job at a time, in turns)"
        },
        if report.allocations_counted {
            "counted per operation"
        } else {
            "not counted (n/c)"
        }
    )?;
    if let Some(note) = report.probe_note() {
        writeln!(out, "machine during the run: {note}")?;
    }
    if report.cancelled {
        writeln!(out, "cancelled: the report holds what finished")?;
    }
    for file in &report.files {
        write_file(out, report, file)?;
    }
    Ok(())
}

/// Writes one input's section of the plain-text report: sizes, where the bytes go, timings,
/// the other runtimes, the scaling sweep and the end-to-end estimates.
fn write_file(out: &mut dyn Write, report: &Report, file: &FileReport) -> io::Result<()> {
    writeln!(
        out,
        "\n== {} ({} bytes as JSON)",
        file.name, file.json_bytes
    )?;
    write_sizes(out, file)?;
    write_shares(out, file)?;
    write_timings(out, file)?;
    write_tails(out, file)?;
    write_all_cores(out, file)?;
    for r in &file.runtimes {
        write_runtime(out, file, r)?;
        write_runtime_wire(out, file, &report.links, r)?;
    }
    if let Some(sweep) = &file.sweep {
        write_sweep(out, file, sweep)?;
    }
    if !file.transfer.is_empty() {
        write_transfer(out, report, file)?;
    }
    Ok(())
}

/// The sizes table: each format's bytes, compressed sizes, ratio to JSON, schema and notes,
/// its variants under it.
fn write_sizes(out: &mut dyn Write, file: &FileReport) -> io::Result<()> {
    writeln!(
        out,
        "\nsizes (gzip 6, zstd 3, brotli 6; MessagePack and CBOR as Python's msgpack and cbor2 \
         write them, then their variants):"
    )?;
    writeln!(
        out,
        "  {:<18} {:>10} {:>10} {:>10} {:>10} {:>7}  {:<8} notes",
        "format", "bytes", "gzip", "zstd", "brotli", "×JSON", "schema"
    )?;
    for f in &file.formats {
        let s = &f.sizes;
        writeln!(
            out,
            "  {:<18} {:>10} {:>10} {:>10} {:>10} {:>7.3}  {:<8} {}",
            s.format.title(),
            s.sizes.raw,
            opt_size(s.sizes.gzip),
            opt_size(s.sizes.zstd),
            opt_size(s.sizes.brotli),
            s.ratio_to_json,
            s.schema.name(),
            s.notes
        )?;
        for v in &f.variants {
            let label = format!("  {}", v.variant.name());
            writeln!(
                out,
                "  {:<18} {:>10} {:>10} {:>10} {:>10} {:>7.3}  {:<8} {}",
                label,
                v.sizes.raw,
                opt_size(v.sizes.gzip),
                opt_size(v.sizes.zstd),
                opt_size(v.sizes.brotli),
                if file.json_bytes == 0 {
                    f64::NAN
                } else {
                    v.sizes.raw as f64 / file.json_bytes as f64
                },
                "",
                saving(v.delta, s.sizes.raw)
            )?;
        }
    }
    Ok(())
}

/// Where the bytes go: each format's share of keys, headers, values and structure, then its
/// biggest fields.
fn write_shares(out: &mut dyn Write, file: &FileReport) -> io::Result<()> {
    writeln!(out, "\nwhere the bytes go (share of each format's bytes):")?;
    writeln!(
        out,
        "  {:<12} {:>8} {:>8} {:>8} {:>10}",
        "format", "keys", "headers", "values", "structure"
    )?;
    for f in &file.formats {
        let all = f.fields.by_role();
        let t = f.fields.total;
        writeln!(
            out,
            "  {:<12} {:>8} {:>8} {:>8} {:>10}",
            f.sizes.format.title(),
            pct(all.key, t),
            pct(all.header, t),
            pct(all.value, t),
            pct(all.structure, t)
        )?;
    }
    for f in &file.formats {
        let mut fields: Vec<_> = f.fields.fields.iter().collect();
        fields.sort_by_key(|c| std::cmp::Reverse(c.total()));
        writeln!(
            out,
            "  {} biggest fields (bytes: key + overhead + value):",
            f.sizes.format.title()
        )?;
        for c in fields.iter().take(TOP_FIELDS) {
            writeln!(
                out,
                "    {:<40} {:>9} = {:>8} + {:>8} + {:>8}  {:>6}",
                c.pattern,
                c.total(),
                c.key,
                c.overhead(),
                c.value,
                pct(c.total(), f.fields.total)
            )?;
        }
    }
    Ok(())
}

/// The timings table: one line per format and library (or why it was not measured).
fn write_timings(out: &mut dyn Write, file: &FileReport) -> io::Result<()> {
    writeln!(
        out,
        "\ntimings (median [95% CI]; MB/s of JSON-equivalent bytes; allocations per op):"
    )?;
    writeln!(
        out,
        "  {:<12} {:<14} {:>9} {:<32} {:>6} {:>6} {:<32} {:>6} {:>6}",
        "format", "library", "bytes", "encode", "MB/s", "alloc", "decode", "MB/s", "alloc"
    )?;
    for r in &file.timings {
        if let Some(e) = &r.error {
            writeln!(
                out,
                "  {:<12} {:<14} {:>9} not measured: {e}",
                r.format.title(),
                r.library.name(),
                r.bytes
            )?;
            continue;
        }
        writeln!(
            out,
            "  {:<12} {:<14} {:>9} {:<32} {:>6} {:>6} {:<32} {:>6} {:>6}",
            r.format.title(),
            r.library.name(),
            r.bytes,
            timing(r.encode.as_ref()),
            rate(r.encode.as_ref(), file.json_bytes),
            allocs(r.encode.as_ref()),
            timing(r.decode.as_ref()),
            rate(r.decode.as_ref(), file.json_bytes),
            allocs(r.decode.as_ref()),
        )?;
    }
    Ok(())
}

/// The scaling sweep over the records: one line per point, then the other runtimes' points on
/// the same slices.
fn write_sweep(out: &mut dyn Write, file: &FileReport, sweep: &Sweep) -> io::Result<()> {
    writeln!(
        out,
        "\nscaling over the records at {} ({} records; bytes, encode / decode median):",
        sweep.records.path, sweep.records.count
    )?;
    // One line per point: records, format, library, bytes, encode / decode median, error.
    let t = |m: &Option<Measurement>| m.as_ref().map_or("-".into(), |m| duration(m.ns.median));
    let point = |out: &mut dyn Write,
                 records: usize,
                 format: &str,
                 library: &str,
                 bytes: usize,
                 (encode, decode): (&Option<Measurement>, &Option<Measurement>),
                 error: Option<&str>| {
        writeln!(
            out,
            "  {records:>7} records  {format:<12} {library:<14} {bytes:>10} B  {:>10} / {:<10}{}",
            t(encode),
            t(decode),
            error.map(|e| format!("  ({e})")).unwrap_or_default()
        )
    };
    for p in &sweep.points {
        point(
            out,
            p.records,
            p.format.title(),
            p.library.name(),
            p.bytes,
            (&p.encode, &p.decode),
            p.error.as_deref(),
        )?;
    }
    // Other runtimes on the same slices: every library each measured, the whole payload's
    // point from its own run.
    for whole in &file.runtimes {
        let at = sweep.runtime_points(whole.runtime, Some(whole));
        if at.len() < 2 {
            continue;
        }
        writeln!(
            out,
            "  {} {}:",
            whole.runtime.title(),
            whole.version.as_deref().unwrap_or("")
        )?;
        for (records, report) in at {
            if let Some(e) = report.error.as_deref().filter(|_| report.rows.is_empty()) {
                writeln!(out, "  {records:>7} records  ({e})")?;
                continue;
            }
            for r in &report.rows {
                point(
                    out,
                    records,
                    r.format.title(),
                    &r.library,
                    r.bytes,
                    (&r.encode, &r.decode),
                    r.error.as_deref(),
                )?;
            }
        }
    }
    Ok(())
}

/// The end-to-end estimates: encode + transfer + decode per link, plain and gzip, for the
/// fastest library of each format.
fn write_transfer(out: &mut dyn Write, report: &Report, file: &FileReport) -> io::Result<()> {
    writeln!(
        out,
        "\nend to end, encode + transfer + decode (plain / gzip), fastest library per format:"
    )?;
    write!(out, "  {:<12} {:<14}", "format", "library")?;
    for l in &report.links {
        write!(out, " {:>24}", l.name)?;
    }
    writeln!(out)?;
    for format in crate::codec::Format::ALL {
        // The library with the smallest plain total on the first link.
        let best = file
            .transfer
            .iter()
            .filter(|t| t.format == format && !t.compressed)
            .min_by(|a, b| a.total().total_cmp(&b.total()));
        let Some(best) = best else { continue };
        write!(out, "  {:<12} {:<14}", format.title(), best.library.name())?;
        for l in &report.links {
            let find = |c: bool| {
                file.transfer
                    .iter()
                    .find(|t| {
                        t.format == format
                            && t.library == best.library
                            && t.link == l.name
                            && t.compressed == c
                    })
                    .map_or("-".into(), |t| duration(t.total() * 1e9))
            };
            write!(out, " {:>24}", format!("{} / {}", find(false), find(true)))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The timings as a Markdown table, one per input: format, library, bytes, ratio to JSON, gzip
/// bytes, encode and decode medians with their throughput (of JSON-equivalent bytes), and the
/// end-to-end estimate per link (plain / gzip). Cells not measured are `-`.
pub fn markdown(report: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for file in &report.files {
        let _ = writeln!(
            out,
            "**{}** ({} bytes as JSON, {} mode)\n",
            file.name,
            file.json_bytes,
            report.mode.name()
        );
        let mut header = vec![
            "format".to_string(),
            "library".into(),
            "bytes".into(),
            "×JSON".into(),
            "gzip".into(),
            "encode".into(),
            "MB/s".into(),
            "decode".into(),
            "MB/s".into(),
        ];
        header.extend(
            report
                .links
                .iter()
                .map(|l| format!("{} (plain / gzip)", l.name)),
        );
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let aligns: Vec<&str> = header
            .iter()
            .enumerate()
            .map(|(i, _)| if i < 2 { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "| {} |", aligns.join(" | "));
        for r in &file.timings {
            let gzip = file.format(r.format).and_then(|f| f.sizes.sizes.gzip);
            let ratio = if file.json_bytes > 0 && r.bytes > 0 {
                format!("{:.3}", r.bytes as f64 / file.json_bytes as f64)
            } else {
                "-".into()
            };
            let median = |m: Option<&Measurement>| m.map_or("-".into(), |m| duration(m.ns.median));
            let mut cells = vec![
                r.format.title().to_string(),
                r.library.name().to_string(),
                r.bytes.to_string(),
                ratio,
                opt_size(gzip),
                median(r.encode.as_ref()),
                rate(r.encode.as_ref(), file.json_bytes),
                median(r.decode.as_ref()),
                rate(r.decode.as_ref(), file.json_bytes),
            ];
            for l in &report.links {
                let find = |c: bool| {
                    file.transfer
                        .iter()
                        .find(|t| {
                            t.format == r.format
                                && t.library == r.library
                                && t.link == l.name
                                && t.compressed == c
                        })
                        .map_or("-".into(), |t| duration(t.total() * 1e9))
                };
                cells.push(format!("{} / {}", find(false), find(true)));
            }
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
    }
    out
}

/// Encode + transfer + decode in one runtime, seconds: the fastest library of each format (by
/// encode + decode median) over each link, the bytes uncompressed (`(format, library, totals
/// per link)`). The same model as the Rust rows' estimates ([`crate::profile::sweep::estimate`]):
/// bytes × 8 / bandwidth + round trip, no slow start.
pub fn runtime_wire(
    links: &[crate::profile::sweep::Link],
    r: &crate::profile::runtimes::RuntimeReport,
) -> Vec<(crate::codec::Format, String, Vec<f64>)> {
    let mut out = Vec::new();
    for format in crate::codec::Format::ALL {
        let best = r
            .rows
            .iter()
            .filter(|row| row.format == format)
            .filter_map(|row| match (&row.encode, &row.decode) {
                (Some(e), Some(d)) => Some((row, (e.ns.median + d.ns.median) / 1e9)),
                _ => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((row, cpu)) = best else { continue };
        let totals = links
            .iter()
            .map(|l| cpu + row.bytes as f64 * 8.0 / l.bits_per_second + l.rtt_seconds)
            .collect();
        out.push((format, row.library.clone(), totals));
    }
    out
}

fn write_runtime_wire(
    out: &mut dyn Write,
    file: &FileReport,
    links: &[crate::profile::sweep::Link],
    r: &crate::profile::runtimes::RuntimeReport,
) -> io::Result<()> {
    let plain = file.runtime_transfers(r, links, false);
    if plain.is_empty() {
        return Ok(());
    }
    let gzip = file.runtime_transfers(r, links, true);
    writeln!(
        out,
        "  end to end in {}, encode + transfer + decode (plain / gzip), fastest library per format:",
        r.runtime.title()
    )?;
    write!(out, "  {:<12} {:<18}", "format", "library")?;
    for l in links {
        write!(out, " {:>24}", l.name)?;
    }
    writeln!(out)?;
    let find = |all: &[crate::profile::sweep::RuntimeTransfer], format, link: &str| {
        all.iter()
            .find(|t| t.format == format && t.link == link)
            .map(|t| t.total())
    };
    let mut notes: Vec<String> = Vec::new();
    for format in crate::codec::Format::ALL {
        let Some(first) = plain.iter().find(|t| t.format == format) else {
            continue;
        };
        write!(out, "  {:<12} {:<18}", format.title(), first.library)?;
        for l in links {
            let cell = |t: Option<f64>| t.map_or("-".into(), |t| duration(t * 1e9));
            write!(
                out,
                " {:>24}",
                format!(
                    "{} / {}",
                    cell(find(&plain, format, &l.name)),
                    cell(find(&gzip, format, &l.name))
                )
            )?;
        }
        writeln!(out)?;
        if let Some(n) = gzip
            .iter()
            .find(|t| t.format == format)
            .and_then(|t| t.fallback.as_ref())
        {
            notes.push(format!("  note: {} gzip: {n}", format.title()));
        }
    }
    for n in notes {
        writeln!(out, "{n}")?;
    }
    // The fastest format per link, plain and with gzip.
    for l in links {
        for (all, how) in [(&plain, "plain"), (&gzip, "gzip")] {
            if let Some(t) = all
                .iter()
                .filter(|t| t.link == l.name)
                .min_by(|a, b| a.total().total_cmp(&b.total()))
            {
                writeln!(
                    out,
                    "  in {} on {} ({how}): {} ({}) wins, {}",
                    r.runtime.title(),
                    l.name,
                    t.format.title(),
                    t.library,
                    duration(t.total() * 1e9)
                )?;
            }
        }
    }
    Ok(())
}

/// One runtime's timings: a row per library with its version, whether its bytes are
/// wirelens', and encode / decode; then what could not be measured and why.
pub fn write_runtime(
    out: &mut dyn Write,
    file: &FileReport,
    r: &crate::profile::runtimes::RuntimeReport,
) -> io::Result<()> {
    let version = match (&r.version, &r.implementation) {
        (Some(v), Some(i)) => format!(" {v} ({i}, {})", r.program),
        (Some(v), None) => format!(" {v} ({})", r.program),
        _ => String::new(),
    };
    writeln!(
        out,
        "\ntimings in {}{version} (median [95% CI]; MB/s of JSON-equivalent bytes; \
         same = the library writes wirelens' bytes):",
        r.runtime.title()
    )?;
    if r.rows.iter().any(|row| row.error.is_none()) {
        writeln!(
            out,
            "  {:<12} {:<18} {:<24} {:>9} {:<4} {:<32} {:>6} {:<32} {:>6}",
            "format", "library", "version", "bytes", "same", "encode", "MB/s", "decode", "MB/s"
        )?;
    }
    for row in r.rows.iter().filter(|row| row.error.is_none()) {
        writeln!(
            out,
            "  {:<12} {:<18} {:<24} {:>9} {:<4} {:<32} {:>6} {:<32} {:>6}",
            row.format.title(),
            row.library,
            row.version.as_deref().unwrap_or("-"),
            row.bytes,
            match row.same_bytes_as_wirelens {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            },
            timing(row.encode.as_ref()),
            rate(row.encode.as_ref(), file.json_bytes),
            timing(row.decode.as_ref()),
            rate(row.decode.as_ref(), file.json_bytes),
        )?;
    }
    for row in r.rows.iter() {
        if let Some(e) = &row.error {
            writeln!(
                out,
                "  {}: {} {}: not measured: {e}",
                r.runtime.name(),
                row.format.title(),
                row.library
            )?;
        }
    }
    // The runtime's own compressors (the wire estimate's gzip), then what it lacks.
    if r.compressors.iter().any(|c| c.error.is_none()) {
        writeln!(
            out,
            "  {} compressors on wirelens' bytes (compressed size, compress / decompress median):",
            r.runtime.title()
        )?;
        for c in r.compressors.iter().filter(|c| c.error.is_none()) {
            writeln!(
                out,
                "  {:<12} {:<7} {:<44} {:>10} B  {:>10} / {:<10}",
                c.format.title(),
                c.codec.name(),
                format!("{} {}", c.library, c.version.as_deref().unwrap_or_default())
                    .chars()
                    .take(44)
                    .collect::<String>(),
                c.bytes,
                timing(c.compress.as_ref()),
                timing(c.decompress.as_ref()),
            )?;
        }
    }
    let mut lacking: Vec<String> = Vec::new();
    for c in r.compressors.iter() {
        if let Some(e) = &c.error {
            let line = format!(
                "  {}: {}: not measured: {e}",
                r.runtime.name(),
                c.codec.name()
            );
            if !lacking.contains(&line) {
                lacking.push(line);
            }
        }
    }
    for line in lacking {
        writeln!(out, "{line}")?;
    }
    if let Some(e) = &r.error {
        writeln!(out, "  {}: {e}", r.runtime.name())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{runtime_wire, saving, timing};
    use crate::codec::Format;
    use crate::profile::bench::Measurement;
    use crate::profile::runtimes::{Runtime, RuntimeReport, RuntimeRow};
    use crate::profile::stats::summarize;
    use crate::profile::sweep::Link;

    fn timed(ns: f64) -> Option<Measurement> {
        Some(Measurement {
            ns: summarize(&[ns], 0, 1)?,
            batch: 1,
            iterations: 1,
            allocs_per_op: None,
            alloc_bytes_per_op: None,
            concurrent: false,
            probes: Vec::new(),
            cpu_ns_per_op: None,
            latency: None,
            all_cores: None,
        })
    }

    #[test]
    fn a_single_sample_says_so_instead_of_an_interval() {
        let one = timed(1.5e9);
        assert_eq!(timing(one.as_ref()), "1.50 s [1 sample]");
        let mut two = one.clone();
        if let Some(m) = two.as_mut() {
            m.ns = summarize(&[1.5e9, 1.7e9], 100, 1).expect("summary");
            m.concurrent = true;
        }
        let text = timing(two.as_ref());
        assert!(
            text.contains('[') && text.contains('–') && text.ends_with("]*"),
            "{text}"
        );
        assert_eq!(timing(None), "-");
    }

    fn row(format: Format, library: &str, bytes: usize, enc: f64, dec: f64) -> RuntimeRow {
        RuntimeRow {
            format,
            library: library.into(),
            version: Some("1".into()),
            bytes,
            same_bytes_as_wirelens: Some(true),
            encode: timed(enc),
            decode: timed(dec),
            install: None,
            error: None,
        }
    }

    #[test]
    fn a_runtimes_wire_estimate_takes_each_formats_fastest_library() {
        let r = RuntimeReport {
            runtime: Runtime::Python,
            program: "python3".into(),
            version: Some("3.11".into()),
            implementation: None,
            rows: vec![
                // 1.25 MB of JSON: 1 s on a 10 Mbit/s link; orjson is the faster JSON library.
                row(Format::Json, "json", 1_250_000, 4e6, 6e6),
                row(Format::Json, "orjson", 1_250_000, 1e6, 2e6),
                // Half the bytes, slower to encode and decode.
                row(Format::MessagePack, "msgpack", 625_000, 10e6, 20e6),
            ],
            compressors: Vec::new(),
            error: None,
        };
        let links = [
            Link {
                name: "mobile".into(),
                bits_per_second: 10e6,
                rtt_seconds: 0.06,
            },
            Link {
                name: "datacenter".into(),
                bits_per_second: 10e9,
                rtt_seconds: 0.0002,
            },
        ];
        let est = runtime_wire(&links, &r);
        assert_eq!(est.len(), 2);
        let (format, library, totals) = &est[0];
        assert_eq!((*format, library.as_str()), (Format::Json, "orjson"));
        // 3 ms of CPU + 1 s on the wire + 60 ms round trip.
        assert!((totals[0] - 1.063).abs() < 1e-9, "{totals:?}");
        assert!(
            (totals[1] - (0.003 + 0.001 + 0.0002)).abs() < 1e-9,
            "{totals:?}"
        );
        let (format, _, totals) = &est[1];
        assert_eq!(*format, Format::MessagePack);
        // On the slow link the smaller format wins, in the datacenter the faster CPU does.
        assert!(totals[0] < est[0].2[0] && totals[1] > est[0].2[1]);
    }

    #[test]
    fn a_runtimes_gzip_estimate_uses_its_own_gzip_and_none_without_one() {
        use crate::profile::runtimes::{Codec, RuntimeCompressor};
        let gzip = RuntimeCompressor {
            format: Format::Json,
            codec: Codec::Gzip,
            library: "gzip".into(),
            version: Some("stdlib".into()),
            // A quarter of the 1.25 MB, 5 ms to compress, 1 ms to decompress.
            bytes: 312_500,
            compress: timed(5e6),
            decompress: timed(1e6),
            install: None,
            error: None,
        };
        let r = RuntimeReport {
            runtime: Runtime::Python,
            program: "python3".into(),
            version: Some("3.11".into()),
            implementation: None,
            rows: vec![
                row(Format::Json, "orjson", 1_250_000, 1e6, 2e6),
                row(Format::MessagePack, "msgpack", 625_000, 10e6, 20e6),
            ],
            compressors: vec![gzip],
            error: None,
        };
        // No Rust formats in this report: MessagePack has neither the runtime's gzip nor Rust's.
        let file = crate::profile::report::FileReport {
            name: "t.json".into(),
            json_bytes: 1_250_000,
            formats: Vec::new(),
            timings: Vec::new(),
            sweep: None,
            transfer: Vec::new(),
            runtimes: Vec::new(),
        };
        let links = [Link {
            name: "mobile".into(),
            bits_per_second: 10e6,
            rtt_seconds: 0.06,
        }];
        let plain = file.runtime_transfers(&r, &links, false);
        assert_eq!(plain.len(), 2);
        let gz = file.runtime_transfers(&r, &links, true);
        assert_eq!(gz.len(), 1, "{gz:?}");
        let t = &gz[0];
        assert_eq!((t.format, t.library.as_str()), (Format::Json, "orjson"));
        assert!(t.compressed && t.fallback.is_none());
        assert_eq!(t.wire_bytes, 312_500);
        // 1 ms encode + 5 ms gzip; 0.25 s + 60 ms on the wire; 1 ms gunzip + 2 ms decode.
        assert!((t.cpu_send - 0.006).abs() < 1e-12);
        assert!((t.wire - 0.31).abs() < 1e-12);
        assert!((t.cpu_receive - 0.003).abs() < 1e-12);
    }

    #[test]
    fn savings_are_signed_grouped_and_in_percent_of_the_default() {
        assert_eq!(saving(-4, 80), "−4 bytes (−5.0%)");
        assert_eq!(saving(-63_524, 32_292_691), "−63,524 bytes (−0.2%)");
        assert_eq!(saving(2, 1000), "+2 bytes (+0.2%)");
        assert_eq!(saving(0, 1000), "same size");
        assert_eq!(saving(-1, 0), "−1 bytes");
    }
}
