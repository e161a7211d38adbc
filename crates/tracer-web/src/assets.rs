//! The page, embedded in the binary (`assets/`: plain ES modules and a style sheet, no build
//! step, no CDN): served by path, `/` being `index.html`.

use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};

static ASSETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// The asset at the request's path, or 404.
pub(crate) async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match ASSETS.get_file(path) {
        Some(file) => (
            [
                (header::CONTENT_TYPE, content_type(path)),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            file.contents(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_and_its_modules_are_embedded() {
        assert!(super::ASSETS.get_file("index.html").is_some());
        assert!(super::ASSETS.get_file("app.js").is_some());
        assert!(super::ASSETS.get_file("style.css").is_some());
    }

    #[test]
    fn the_page_preloads_every_module_it_has() {
        let index = super::ASSETS
            .get_file("index.html")
            .and_then(|f| f.contents_utf8())
            .unwrap_or_default();
        let modules = super::ASSETS
            .get_dir("js")
            .map(|d| d.files().count())
            .unwrap_or(0);
        let preloaded = index.matches("rel=\"modulepreload\"").count();
        assert!(modules > 10, "{modules} modules");
        for file in super::ASSETS
            .get_dir("js")
            .into_iter()
            .flat_map(|d| d.files())
        {
            let path = file.path().display().to_string();
            assert!(
                index.contains(&format!("href=\"/{path}\"")),
                "{path} is not preloaded"
            );
        }
        assert_eq!(preloaded, modules);
    }
}
