//! `rightsize watch URL`: the dashboard on a run served elsewhere (`--serve`, docs/watch.md).

use crate::serve::follow::Watched;
use crate::serve::SERVE_TOKEN_ENV;
use std::path::Path;

/// `rightsize watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// The served run, as it printed it: http://HOST:PORT (through `kubectl port-forward`,
    /// http://127.0.0.1:PORT). Its token, when it has one, comes from RIGHTSIZE_SERVE_TOKEN;
    /// with it, x asks the run to stop
    #[arg(value_name = "URL")]
    pub url: String,
}

/// Opens the read-only dashboard on the served run at `args.url`.
pub async fn execute(
    args: WatchArgs,
    config: Option<&Path>,
) -> anyhow::Result<std::process::ExitCode> {
    let token = std::env::var(SERVE_TOKEN_ENV)
        .ok()
        .filter(|t| !t.is_empty());
    let watched = Watched::new(&args.url, token.as_deref())
        .map_err(|e| crate::config::overrides::InputError(format!("watch: {e}")))?;
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(crate::config::overrides::InputError(format!(
            "watch opens the dashboard, and stdout is not a terminal: run it in one (for the \
             figures alone, `curl {}/metrics`)",
            args.url.trim_end_matches('/')
        ))
        .into());
    }
    // the run is there and answers, before the terminal is taken over
    let described = watched
        .described()
        .await
        .map_err(|e| anyhow::anyhow!("watch: {e}"))?;
    if let Some(rec) = described.get("campaign") {
        let rec: crate::campaign::campaign_file::CampaignRecord =
            serde_json::from_value(rec.clone()).map_err(|e| {
                anyhow::anyhow!(
                    "watch: {} serves a campaign this version cannot read: {e}",
                    args.url
                )
            })?;
        return crate::tui::campaign_watch::run_campaign_watch(watched, rec).await;
    }
    let analysis = Watched::analysis_of(&described);
    crate::tui::run_watch(config.map(Path::to_path_buf), watched, analysis).await
}
