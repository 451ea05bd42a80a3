//! CSV export of timeseries, downloaded by the browser.

use wasm_bindgen::JsCast;

use crate::series::Series;

/// One row per time stamp, one column per series; empty where a series has no sample then.
pub fn to_csv(series: &[Series]) -> String {
    let mut times: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut out = String::from("seconds");
    for s in series {
        out.push(',');
        out.push_str(&s.name.replace(',', ";"));
    }
    out.push('\n');
    for t in times {
        out.push_str(&format!("{t}"));
        for s in series {
            out.push(',');
            if let Some(p) = s.points.iter().find(|p| p.0 == t) {
                out.push_str(&format!("{}", p.1));
            }
        }
        out.push('\n');
    }
    out
}

/// Offers `series` as `<name>.csv` for download.
pub fn download_csv(name: &str, series: &[Series]) {
    let parts = js_sys::Array::of1(&to_csv(series).into());
    if let Err(e) = download(&format!("{name}.csv"), &parts, "text/csv") {
        tracing::error!("cannot export {name}.csv: {e:?}");
    }
}

/// Offers `data` as the file `name` for download.
pub fn download_bytes(name: &str, data: &[u8]) -> Result<(), wasm_bindgen::JsValue> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(data));
    download(name, &parts, "application/octet-stream")
}

fn download(file: &str, parts: &js_sys::Array, mime: &str) -> Result<(), wasm_bindgen::JsValue> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_buffer_source_sequence_and_options(parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(file);
    a.click();
    web_sys::Url::revoke_object_url(&url)
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn columns_line_up_by_time() {
        let series = vec![
            Series { name: "a".into(), points: vec![(0.0, 1.0), (1.0, 2.0)] },
            Series { name: "b,c".into(), points: vec![(1.0, 5.0)] },
        ];
        assert_eq!(to_csv(&series), "seconds,a,b;c\n0,1,\n1,2,5\n");
    }
}
