//! System fonts as fallbacks, so text in payloads renders in any script.
//!
//! egui's built-in fonts cover Latin, Greek, Cyrillic and a monochrome emoji subset; Chinese,
//! Japanese and Korean text (common in real payloads: merchant names, user names) would show as
//! boxes. [`install_fallback_fonts`] finds installed fonts that cover CJK, extra symbols and
//! emoji, and appends them to both the proportional and the monospace families, after egui's
//! defaults, so Latin text keeps its look and only missing glyphs come from the system.
//!
//! Discovery uses `fontdb`, which reads only the name tables of the installed fonts (memory-mapped);
//! the files chosen are opened once each, even when two faces of one collection are used, and
//! mapped when large (as the app's sources are), so a 20 MB CJK collection costs the pages of
//! the glyphs drawn, not the whole file.
//!
//! What it does not do: colour emoji. egui draws monochrome outlines only, so colour-bitmap fonts
//! (Noto Color Emoji, Apple Color Emoji) are skipped; a monochrome emoji font (Noto Emoji,
//! Symbola) is used when installed. With none of the fonts installed, the app works the same and
//! those characters show as boxes; the report says what is missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use eframe::egui::{self, FontData, FontFamily, FontInsert, FontPriority, InsertFontFamily};

/// What a group of fallback fonts is for, with the families tried in order (the first installed
/// one is used).
struct Want {
    covers: &'static str,
    proportional: &'static [&'static str],
    monospace: &'static [&'static str],
}

const WANTS: &[Want] = &[
    Want {
        covers: "Chinese, Japanese and Korean",
        proportional: &[
            "Noto Sans CJK SC",
            "Noto Sans CJK JP",
            "Noto Sans CJK TC",
            "Noto Sans CJK KR",
            "Source Han Sans SC",
            "Source Han Sans CN",
            "Source Han Sans",
            "Noto Sans SC",
            "WenQuanYi Micro Hei",
            "WenQuanYi Zen Hei",
            "Droid Sans Fallback",
            "Microsoft YaHei",
            "PingFang SC",
            "Hiragino Sans",
            "Yu Gothic",
            "Malgun Gothic",
            "SimSun",
        ],
        monospace: &[
            "Noto Sans Mono CJK SC",
            "Noto Sans Mono CJK JP",
            "Source Han Mono SC",
            "WenQuanYi Micro Hei Mono",
            "WenQuanYi Zen Hei Mono",
        ],
    },
    Want {
        covers: "emoji (monochrome)",
        proportional: &["Noto Emoji", "Symbola", "Segoe UI Emoji", "Segoe UI Symbol"],
        monospace: &[],
    },
    Want {
        covers: "symbols and other scripts",
        proportional: &[
            "DejaVu Sans",
            "Noto Sans Symbols 2",
            "Noto Sans Symbols",
            "Arial Unicode MS",
            "Segoe UI",
        ],
        monospace: &["DejaVu Sans Mono"],
    },
];

/// One system font added as a fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedFont {
    /// The font family, e.g. "Noto Sans CJK SC".
    pub family: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The face within a collection file (`.ttc`).
    pub index: u32,
    /// What it is for, e.g. "Chinese, Japanese and Korean".
    pub covers: &'static str,
    /// Whether it went into the monospace family (else the proportional one; a face used for
    /// both is listed once for each).
    pub monospace: bool,
}

/// Which fallback fonts [`install_fallback_fonts`] found and added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FontReport {
    /// The fonts added, in fallback order.
    pub added: Vec<AddedFont>,
    /// What no installed font was found for (those characters show as boxes).
    pub missing: Vec<&'static str>,
    /// How many font faces are installed (scanned by name only).
    pub faces_scanned: usize,
    /// How long discovery and loading took, in milliseconds.
    pub millis: u128,
}

impl FontReport {
    /// Whether a font for Chinese, Japanese and Korean was added.
    pub fn has_cjk(&self) -> bool {
        self.added
            .iter()
            .any(|f| f.covers == "Chinese, Japanese and Korean")
    }

    /// A few lines for the About window.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for f in &self.added {
            let family = if f.monospace {
                "monospace"
            } else {
                "proportional"
            };
            out.push_str(&format!(
                "{} ({}, {family}): {}\n",
                f.family,
                f.covers,
                f.path.display()
            ));
        }
        for m in &self.missing {
            out.push_str(&format!(
                "no installed font for {m}: such characters show as boxes\n"
            ));
        }
        out.push_str(&format!(
            "{} installed faces scanned in {} ms",
            self.faces_scanned, self.millis
        ));
        out
    }
}

/// Adds installed system fonts as fallbacks so CJK text and emoji in payloads render.
///
/// Keeps egui's default fonts first. Returns which fonts were found (see [`FontReport`]); never
/// fails: with nothing installed, nothing is added.
pub fn install_fallback_fonts(ctx: &egui::Context) -> FontReport {
    install_fallback_fonts_from(ctx, &FontSources::System)
}

/// Where [`install_fallback_fonts_from`] looks for fonts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FontSources {
    /// The fonts installed on the system (what the app uses).
    System,
    /// Only the font files in these folders (searched recursively): the same discovery and
    /// loading over a known set of fonts, e.g. the subset fonts the tests bring.
    Folders(Vec<PathBuf>),
}

/// [`install_fallback_fonts`] over the fonts of `sources`.
pub fn install_fallback_fonts_from(ctx: &egui::Context, sources: &FontSources) -> FontReport {
    let started = std::time::Instant::now();
    let mut db = fontdb::Database::new();
    match sources {
        FontSources::System => db.load_system_fonts(),
        FontSources::Folders(folders) => {
            for folder in folders {
                db.load_fonts_dir(folder);
            }
        }
    }
    let mut report = FontReport {
        faces_scanned: db.len(),
        ..FontReport::default()
    };
    // Each file is opened once, even when two of its faces are used, as the app opens payload
    // files: a large one (a CJK collection is about 20 MB) is mapped, so only the pages of the
    // glyphs drawn are read into memory.
    let mut files: HashMap<PathBuf, Option<Arc<dyn AsRef<[u8]> + Send + Sync>>> = HashMap::new();
    for want in WANTS {
        let mut found_any = false;
        for (families, monospace) in [(want.proportional, false), (want.monospace, true)] {
            let Some((family, path, index)) = find(&db, families) else {
                continue;
            };
            let data = files
                .entry(path.clone())
                .or_insert_with(|| {
                    crate::workspace::Source::open(&path)
                        .ok()
                        .map(|source| -> Arc<dyn AsRef<[u8]> + Send + Sync> { source })
                })
                .clone();
            let Some(data) = data else {
                continue;
            };
            let target = if monospace {
                FontFamily::Monospace
            } else {
                FontFamily::Proportional
            };
            // A proportional fallback also serves monospace text when no monospace one exists.
            let mut families = vec![InsertFontFamily {
                family: target,
                priority: FontPriority::Lowest,
            }];
            if !monospace && find(&db, want.monospace).is_none() {
                families.push(InsertFontFamily {
                    family: FontFamily::Monospace,
                    priority: FontPriority::Lowest,
                });
            }
            ctx.add_font(FontInsert::new(
                &format!("system: {family} #{index}"),
                FontData::from_blob(data, index),
                families,
            ));
            found_any = true;
            report.added.push(AddedFont {
                family,
                path,
                index,
                covers: want.covers,
                monospace,
            });
        }
        if !found_any {
            report.missing.push(want.covers);
        }
    }
    report.millis = started.elapsed().as_millis();
    report
}

/// The first of `families` that is installed (regular weight, upright): its name, file and face
/// index. Fonts not in a file (none from `load_system_fonts`) are skipped.
fn find(db: &fontdb::Database, families: &[&str]) -> Option<(String, PathBuf, u32)> {
    families.iter().find_map(|name| {
        let query = fontdb::Query {
            families: &[fontdb::Family::Name(name)],
            ..fontdb::Query::default()
        };
        let id = db.query(&query)?;
        let face = db.face(id)?;
        let path: &Path = match &face.source {
            fontdb::Source::File(p) | fontdb::Source::SharedFile(p, _) => p,
            fontdb::Source::Binary(_) => return None,
        };
        Some((name.to_string(), path.to_path_buf(), face.index))
    })
}
