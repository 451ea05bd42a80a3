//! Precompresses the built UI: next to each text or wasm file in `dist/`, a `.br` (brotli, best
//! quality) and a `.gz` (gzip, best), which the relay serves to browsers that accept them. Done
//! once at build time, so the relay spends no CPU on it and the best (slow) settings are
//! affordable: the page's wasm goes from about 2.2 MB to about 0.65 MB on the wire.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Extensions worth compressing; images such as PNG are compressed already.
const COMPRESSIBLE: &[&str] = &["wasm", "js", "css", "html", "svg", "json"];

/// Writes `.br` and `.gz` beside every compressible file in `dist` (not recursive: Trunk's output
/// is flat). Returns the (file, raw, brotli) sizes for a report.
pub fn dist(dist: &Path) -> Result<Vec<(String, usize, usize)>> {
    let mut sizes = Vec::new();
    for entry in fs::read_dir(dist).with_context(|| format!("reading {}", dist.display()))? {
        let path = entry?.path();
        let compressible =
            path.extension().and_then(|e| e.to_str()).is_some_and(|e| COMPRESSIBLE.contains(&e));
        if !compressible {
            continue;
        }
        let data = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let br = brotli(&data)?;
        fs::write(with_suffix(&path, "br"), &br)?;
        fs::write(with_suffix(&path, "gz"), gzip(&data)?)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        sizes.push((name, data.len(), br.len()));
    }
    Ok(sizes)
}

fn with_suffix(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    name.into()
}

fn brotli(data: &[u8]) -> Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams { quality: 11, lgwin: 24, ..Default::default() };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params)?;
    Ok(out)
}

fn gzip(data: &[u8]) -> Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data)?;
    Ok(encoder.finish()?)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn both_encodings_decode_to_the_original() {
        let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let mut from_br = Vec::new();
        brotli::BrotliDecompress(&mut &brotli(&data).unwrap()[..], &mut from_br).unwrap();
        assert_eq!(from_br, data);
        let mut from_gz = Vec::new();
        flate2::read::GzDecoder::new(&gzip(&data).unwrap()[..]).read_to_end(&mut from_gz).unwrap();
        assert_eq!(from_gz, data);
    }

    #[test]
    fn only_compressible_files_get_encoded_copies() {
        let dir = std::env::temp_dir().join(format!("xtask-compress-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("app-0123456789abcdef_bg.wasm"), vec![0u8; 4096]).unwrap();
        fs::write(dir.join("logo.png"), vec![0u8; 4096]).unwrap();
        let sizes = dist(&dir).unwrap();
        assert_eq!(sizes.len(), 1);
        assert!(dir.join("app-0123456789abcdef_bg.wasm.br").is_file());
        assert!(dir.join("app-0123456789abcdef_bg.wasm.gz").is_file());
        assert!(!dir.join("logo.png.br").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
