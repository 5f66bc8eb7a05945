//! A region of a screenshot as PNG bytes.

use eframe::egui::{self, ColorImage};

/// Encodes the part of `image` (a screenshot, in pixels) under `rect` (in points) as an RGBA
/// PNG. The rectangle is clipped to the image; an empty result is an error.
pub fn encode_png(
    image: &ColorImage,
    rect: egui::Rect,
    pixels_per_point: f32,
) -> Result<Vec<u8>, PngError> {
    let [w, h] = image.size;
    let clamp = |v: f32, max: usize| (v * pixels_per_point).round().clamp(0.0, max as f32) as usize;
    let (x0, x1) = (clamp(rect.min.x, w), clamp(rect.max.x, w));
    let (y0, y1) = (clamp(rect.min.y, h), clamp(rect.max.y, h));
    if x1 <= x0 || y1 <= y0 {
        return Err(PngError::OffScreen);
    }
    let mut rgba = Vec::with_capacity((x1 - x0) * (y1 - y0) * 4);
    for y in y0..y1 {
        for x in x0..x1 {
            let c = image.pixels[y * w + x];
            rgba.extend_from_slice(&c.to_srgba_unmultiplied());
        }
    }
    let mut out = Vec::new();
    let width = u32::try_from(x1 - x0)?;
    let height = u32::try_from(y1 - y0)?;
    let mut encoder = ::png::Encoder::new(&mut out, width, height);
    encoder.set_color(::png::ColorType::Rgba);
    encoder.set_depth(::png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgba)?;
    writer.finish()?;
    Ok(out)
}

/// Why [`encode_png`] wrote no PNG.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PngError {
    /// The plot's rectangle holds no pixel of the screenshot.
    #[error("the plot is not on screen")]
    OffScreen,
    /// The region is wider or taller than a PNG holds.
    #[error(transparent)]
    TooLarge(#[from] std::num::TryFromIntError),
    /// The PNG encoder failed.
    #[error(transparent)]
    Encode(#[from] ::png::EncodingError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eframe::egui::{pos2, Color32};

    /// The crop takes exactly the pixels under the rectangle (scaled by pixels per point), and
    /// the PNG decodes back to them.
    #[test]
    fn crops_and_round_trips() -> Result<(), Box<dyn std::error::Error>> {
        let mut image = ColorImage::filled([8, 6], Color32::BLACK);
        for y in 0..6 {
            for x in 0..8 {
                image.pixels[y * 8 + x] = Color32::from_rgb(x as u8 * 30, y as u8 * 40, 7);
            }
        }
        // Points (1,1)–(3,2) at 2 pixels per point: pixels x 2..6, y 2..4.
        let rect = egui::Rect::from_min_max(pos2(1.0, 1.0), pos2(3.0, 2.0));
        let bytes = encode_png(&image, rect, 2.0)?;
        let decoder = ::png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
        let mut buf = vec![0; reader.output_buffer_size().ok_or("size")?];
        let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
        assert_eq!((info.width, info.height), (4, 2));
        let px = |x: usize, y: usize| &buf[(y * 4 + x) * 4..(y * 4 + x) * 4 + 4];
        assert_eq!(px(0, 0), &[60, 80, 7, 255]);
        assert_eq!(px(3, 1), &[150, 120, 7, 255]);
        let off = egui::Rect::from_min_max(pos2(20.0, 20.0), pos2(30.0, 30.0));
        let err = encode_png(&image, off, 1.0).err().ok_or("off screen")?;
        assert_eq!(err.to_string(), "the plot is not on screen");
        Ok(())
    }
}
