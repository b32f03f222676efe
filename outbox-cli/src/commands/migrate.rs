//! `outbox migrate`: apply the schema, print it, or revert it to a version.

use outbox_core::Result;

use crate::args::MigrateArgs;
use crate::backend::Target;

/// Applies, prints or reverts the schema of `target`'s table as `args` say.
pub(crate) async fn run(target: &Target, args: MigrateArgs) -> Result<()> {
    let engine = target.engine()?;
    let table = target.table.qualified();
    if let Some(version) = args.down_to {
        let version = (engine.migrate_down_to)(target, version).await?;
        out!("schema of {table} is at version {version}");
    } else if args.print {
        out_raw!("{}", (engine.script)(target, args.ordered)?);
    } else {
        let version = (engine.migrate)(target, args.ordered).await?;
        let prepared = if args.ordered {
            ", prepared for claims in per-key order"
        } else {
            ""
        };
        out!("schema of {table} is at version {version}{prepared}");
    }
    Ok(())
}
