//! The command palette and the one table of commands the menus, the palette and the shortcuts
//! window read.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::gui::{egui, palette_score, App, AppOptions, UiCommand, View};

use crate::gui_app::{app, harness, sample, settle};

fn open_palette(h: &mut Harness<'_, Option<App>>, modifiers: egui::Modifiers, key: egui::Key) {
    h.key_press_modifiers(modifiers, key);
    h.run_steps(3);
}

#[test]
fn ctrl_shift_p_finds_a_command_by_words_and_enter_runs_it() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    assert_eq!(app(&h).view, View::Inspector);
    open_palette(
        &mut h,
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::P,
    );
    let field = h.get_by_label("Command palette");
    assert!(field.is_focused(), "the query field has the keyboard");
    // Every command of the table is listed, with its shortcut beside it.
    for c in UiCommand::ALL {
        if c != UiCommand::Palette {
            h.get_by_label(c.text());
        }
    }
    h.get_by_label("Ctrl+O");
    h.get_by_label("Show source: iot-metrics.json");
    // Words in any order narrow it to one.
    h.get_by_label("Command palette").type_text("profiler show");
    h.run_steps(2);
    assert!(h.query_by_label(UiCommand::Open.text()).is_none());
    h.get_by_label("Show the profiler");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert_eq!(app(&h).view, View::Profiler);
    assert!(h.query_by_label("Command palette").is_none(), "closed");
}

#[test]
fn ctrl_k_opens_it_arrows_choose_and_escape_closes_it_without_running_anything() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    open_palette(&mut h, egui::Modifiers::COMMAND, egui::Key::K);
    h.get_by_label("Command palette").type_text("show the");
    h.run_steps(2);
    // "Show the inspector", "… profiler", "… diff", "… schema diff": the second is the profiler.
    h.key_press(egui::Key::ArrowDown);
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert_eq!(app(&h).view, View::Profiler);
    open_palette(&mut h, egui::Modifiers::COMMAND, egui::Key::K);
    h.get_by_label("Command palette").type_text("diff");
    h.run_steps(2);
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(
        h.query_by_label("Command palette").is_none(),
        "Escape closed it"
    );
    assert_eq!(app(&h).view, View::Profiler, "nothing ran");
}

#[test]
fn a_command_that_cannot_run_is_listed_but_does_nothing() {
    // A pasted source has no file to read again.
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    h.event(egui::Event::Paste("[1, 2, 3]".into()));
    settle(&mut h);
    assert!(!app(&h).enabled(UiCommand::Reload));
    open_palette(&mut h, egui::Modifiers::COMMAND, egui::Key::K);
    h.get_by_label("Command palette").type_text("reload");
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert!(
        h.query_by_label("Command palette").is_some(),
        "a disabled row does not run or close the palette"
    );
    assert!(app(&h).status.is_none(), "nothing was read again");
    // Its key says why it did nothing.
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::R);
    h.run_steps(3);
    h.get_by_label_contains("Reload (Ctrl+R): the source shown was not read from a file");
}

#[test]
fn menus_and_the_shortcuts_window_read_the_same_table() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("File").click();
    h.run_steps(2);
    // Each File entry with a key shows it as the palette does.
    for c in [
        UiCommand::Open,
        UiCommand::OpenPath,
        UiCommand::Reload,
        UiCommand::PasteArea,
        UiCommand::CloseSource,
        UiCommand::Quit,
    ] {
        // A menu button's label is its text and its shortcut, as egui joins them.
        h.get_by_label(&format!("{} {}", c.text(), c.shortcut_text(&h.ctx)));
    }
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    h.key_press(egui::Key::F1);
    h.run_steps(3);
    for c in UiCommand::ALL {
        if !c.shortcuts().is_empty() {
            h.get_by_label(&format!("{}: {}", c.text(), c.tooltip()));
        }
    }
    h.get_by_label("Ctrl+Shift+P, Ctrl+K");
    assert_eq!(palette_score("PAL", "Command palette"), Some(1));
}

#[test]
fn the_profilers_tabs_are_commands_too() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    open_palette(&mut h, egui::Modifiers::COMMAND, egui::Key::K);
    h.get_by_label("Command palette")
        .type_text("profiler timings");
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert_eq!(app(&h).view, View::Profiler);
    assert_eq!(format!("{:?}", app(&h).profiler.tab), "Timings");
}
