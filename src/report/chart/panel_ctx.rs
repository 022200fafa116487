//! What every panel of one image draws with ([`Ctx`]): the chart's spec, the sizes for the
//! image, and whether the panel stands alone (the HTML report's), when its legend also lists
//! what the image's shared legend would.

use super::legend::Legend;
use super::marks::{dot_entries, marker_entries};
use super::parts::Sizes;
use super::ChartSpec;

/// What every panel of one image draws with.
pub(super) struct Ctx<'a> {
    pub spec: &'a ChartSpec,
    pub sz: Sizes,
    /// The panel stands alone (the HTML report's): its legend also lists what the image's
    /// shared legend would (the answer, bracket and knee, filled and hollow markers).
    pub alone: bool,
}

impl Ctx<'_> {
    /// The shared entries, in a panel that stands alone.
    pub fn shared(&self, legend: &mut Legend) {
        if self.alone {
            marker_entries(self.spec, legend, &self.sz);
            dot_entries(self.spec, legend);
        }
    }
}
