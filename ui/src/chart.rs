//! Live timeseries charts: SVG drawn with plotters, a readout that follows the pointer, a choice
//! of time window, and CSV export of exactly what is plotted.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use web_sys::MouseEvent;

use crate::export;
use crate::series::Series;

const WIDTH: u32 = 560;
const HEIGHT: u32 = 220;
/// Colours of the series, in order, chosen to read on the dark background.
const PALETTE: [RGBColor; 4] =
    [RGBColor(88, 166, 255), RGBColor(63, 185, 80), RGBColor(210, 153, 34), RGBColor(248, 81, 73)];

/// How much of the history a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    Minute,
    FiveMinutes,
    All,
}

impl Window {
    fn seconds(self) -> Option<f64> {
        match self {
            Self::Minute => Some(60.0),
            Self::FiveMinutes => Some(300.0),
            Self::All => None,
        }
    }
}

/// Where the plotting area sits, in pixels and in data coordinates, for the pointer readout.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Frame {
    px: (f64, f64),
    x: (f64, f64),
}

fn visible(series: &[Series], window: Window) -> Vec<Series> {
    let end = series.iter().filter_map(|s| s.points.last()).map(|p| p.0).fold(0.0, f64::max);
    let start = window.seconds().map_or(f64::MIN, |w| end - w);
    series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s.points.iter().copied().filter(|p| p.0 >= start).collect(),
        })
        .collect()
}

/// Draws `series` as SVG; returns the markup and the plotting frame.
fn draw(series: &[Series], unit: &str) -> (String, Frame) {
    let mut svg = String::new();
    let mut frame = Frame::default();
    // Empty axes cost as much layout as full ones, and every chart starts empty while the page
    // loads.
    if series.iter().all(|s| s.points.is_empty()) {
        return (draw_empty(), frame);
    }
    let all = series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = all.clone().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let y1 = all.fold(0.0_f64, |m, p| m.max(p.1));
    // At least a ten-second span, so that the first samples do not fill the whole width.
    let (x0, x1) = if x0 <= x1 { (x0, x1.max(x0 + 10.0)) } else { (0.0, 60.0) };
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = root.fill(&BACKGROUND);
        let Ok(mut chart) = ChartBuilder::on(&root)
            .margin(8)
            // Room for the tick labels and, below them, the axis title.
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0.0..y1)
        else {
            return (svg_error(), frame);
        };
        let text = label_style();
        let y_decimals = label_decimals(y1);
        let _ = chart
            .configure_mesh()
            // No minor grid: ten light lines per bold one were three quarters of the page's
            // elements, and laying them out held the main thread at load and on every redraw.
            .max_light_lines(0)
            .bold_line_style(RGBColor(60, 70, 82))
            .axis_style(RGBColor(90, 100, 112))
            .label_style(text.clone())
            .y_label_formatter(&|v| format!("{v:.y_decimals$}"))
            .x_desc("seconds")
            .y_desc(unit)
            .axis_desc_style(text)
            .draw();
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let _ =
                chart.draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)));
            let _ = chart.draw_series(s.points.iter().map(|p| Circle::new(*p, 2, color.filled())));
        }
        let (px, _) = chart.plotting_area().get_pixel_range();
        frame = Frame { px: (px.start as f64, px.end as f64), x: (x0, x1) };
        let _ = root.present();
    }
    (svg, frame)
}

/// Decimals that tell apart the labels of an axis from 0 to `top` (plotters draws up to ten):
/// 0.0002 MB/s must not read "0.0", a 5 ms axis not "4, 4, 3, 3", nor 2000 ms "2000.00".
fn label_decimals(top: f64) -> usize {
    let step = top / 10.0;
    if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    }
}

const BACKGROUND: RGBColor = RGBColor(24, 32, 41);

/// The axes' labels and titles.
fn label_style() -> TextStyle<'static> {
    ("sans-serif", 12).into_font().color(&RGBColor(139, 152, 165))
}

/// What a chart without samples shows: its plot's background, in the same place and size, with a
/// line of text in the labels' font. So the page lays out that font at the plot's scale while it
/// loads, not when the first sample arrives, as the node connects (`font_warmup.rs` says why that
/// matters).
fn draw_empty() -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = root.fill(&BACKGROUND);
        let centre = Pos::new(HPos::Center, VPos::Center);
        let middle = (WIDTH as i32 / 2, HEIGHT as i32 / 2);
        let _ = root.draw(&Text::new("no samples yet", middle, label_style().pos(centre)));
        let _ = root.present();
    }
    svg
}

fn svg_error() -> String {
    "<p>cannot draw this chart</p>".into()
}

/// The value of each series nearest to time `t`.
fn readout(series: &[Series], t: f64) -> String {
    series
        .iter()
        .filter_map(|s| {
            let p = s.points.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))?;
            Some(format!("{} {:.1} at {:.0} s", s.name, p.1, p.0))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A chart of `series` with its legend, window buttons, pointer readout and CSV export.
#[component]
pub fn Chart(
    title: &'static str,
    unit: &'static str,
    /// File name of the CSV export, without extension.
    file: &'static str,
    #[prop(into)] series: Signal<Vec<Series>>,
) -> impl IntoView {
    let window = RwSignal::new(Window::FiveMinutes);
    let shown = Memo::new(move |_| visible(&series.get(), window.get()));
    let drawn = Memo::new(move |_| draw(&shown.get(), unit));
    let pointer = RwSignal::new(None::<String>);
    let on_move = move |ev: MouseEvent| {
        let Frame { px, x } = drawn.get_untracked().1;
        let offset = ev.offset_x() as f64 * WIDTH as f64 / client_width(&ev).max(1.0);
        if px.1 > px.0 && offset >= px.0 && offset <= px.1 {
            let t = x.0 + (offset - px.0) / (px.1 - px.0) * (x.1 - x.0);
            pointer.set(Some(readout(&shown.get_untracked(), t)));
        }
    };
    let button = move |label: &'static str, w: Window| {
        view! {
            <button class:active=move || window.get() == w on:click=move |_| window.set(w)>{label}</button>
        }
    };
    view! {
        <figure class="chart" data-testid=file>
            <figcaption>
                <span class="title">{title}</span>
                <span class="legend">
                    {move || series.get().iter().enumerate().map(|(i, s)| {
                        let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
                        view! { <span style=format!("color: rgb({r},{g},{b})")>"● " {s.name.clone()}</span> }
                    }).collect_view()}
                </span>
                <span class="controls">
                    {button("1 min", Window::Minute)}
                    {button("5 min", Window::FiveMinutes)}
                    {button("all", Window::All)}
                    <button on:click=move |_| export::download_csv(file, &series.get_untracked())>"CSV"</button>
                </span>
            </figcaption>
            <div class="plot" inner_html=move || drawn.get().0 on:mousemove=on_move on:mouseleave=move |_| pointer.set(None)></div>
            <p class="readout">{move || pointer.get().unwrap_or_else(|| "move the pointer over the chart to read values".into())}</p>
        </figure>
    }
}

fn client_width(ev: &MouseEvent) -> f64 {
    use wasm_bindgen::JsCast;
    ev.current_target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map_or(WIDTH as f64, |e| e.client_width() as f64)
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    fn series(points: &[(f64, f64)]) -> Vec<Series> {
        vec![Series { name: "rate".into(), points: points.to_vec() }]
    }

    #[test]
    fn the_window_keeps_the_latest_seconds() {
        let s = series(&[(0.0, 1.0), (100.0, 2.0), (130.0, 3.0)]);
        assert_eq!(visible(&s, Window::Minute)[0].points, vec![(100.0, 2.0), (130.0, 3.0)]);
        assert_eq!(visible(&s, Window::All)[0].points.len(), 3);
    }

    #[test]
    fn a_chart_without_samples_draws_no_axes_and_one_with_samples_draws_them() {
        let (empty, _) = draw(&series(&[]), "MB/s");
        assert!(empty.contains("no samples yet") && !empty.contains("MB/s"), "{empty}");
        let (svg, frame) = draw(&series(&[(0.0, 1.0), (1.0, 2.0)]), "MB/s");
        assert!(svg.starts_with("<svg") && svg.contains("polyline"), "{svg}");
        assert!(frame.px.1 > frame.px.0);
    }

    #[test]
    fn an_empty_chart_writes_in_the_labels_font_at_the_plots_size() {
        let font = |svg: &str| {
            let at = svg.find("font-size=").expect("a text");
            svg[at..].split(' ').next().unwrap().to_owned()
        };
        let empty = draw_empty();
        let (full, _) = draw(&series(&[(0.0, 1.0), (1.0, 2.0)]), "MB/s");
        assert_eq!(font(&empty), font(&full));
        assert_eq!(empty.split('>').next(), full.split('>').next(), "the same svg element");
    }

    #[test]
    fn axis_labels_keep_as_many_decimals_as_their_range_needs() {
        assert_eq!(label_decimals(2000.0), 0);
        assert_eq!(label_decimals(11.0), 0);
        assert_eq!(label_decimals(5.5), 1);
        assert_eq!(label_decimals(1.1), 1);
        assert_eq!(label_decimals(0.0011), 4);
        assert_eq!(label_decimals(0.0), 0);
    }

    #[test]
    fn the_readout_names_the_nearest_sample() {
        let s = series(&[(0.0, 1.0), (1.0, 2.5), (2.0, 4.0)]);
        assert_eq!(readout(&s, 1.2), "rate 2.5 at 1 s");
    }
}
