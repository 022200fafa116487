//! The report's stylesheet, inlined in the page (no file or font is fetched). It lives in
//! `assets/report.css` (screen at most 1,280 px wide, print on A4) and is built in here.

/// The stylesheet, as `assets/report.css` was when this binary was built.
pub const CSS: &str = include_str!("../../../assets/report.css");

#[cfg(test)]
mod tests {
    use super::CSS;

    #[test]
    fn the_stylesheet_keeps_the_page_well_formed_xhtml() {
        // inside <style> these would end the element or start an entity
        assert!(!CSS.contains('<'), "a '<' in assets/report.css");
        assert!(!CSS.contains('&'), "a '&' in assets/report.css");
    }

    #[test]
    fn the_stylesheet_has_a_print_layout_for_a4() {
        assert!(CSS.contains("@media print"));
        assert!(CSS.contains("size:A4"));
        assert!(
            CSS.contains("overflow-x:auto"),
            "wide tables scroll in their box"
        );
    }
}
