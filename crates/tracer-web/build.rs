//! Rebuilds the crate when a page asset is added, changed or removed (`include_dir!` embeds them).

fn main() {
    println!("cargo:rerun-if-changed=assets");
}
