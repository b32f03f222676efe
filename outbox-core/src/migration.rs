//! Numbered schema migrations, shipped as `.sql` files by each backend crate, and the
//! facts a database records about the ones it applied.

use sha2::{Digest, Sha256};

/// What a down script opens with when the migration cannot be reverted; the words after
/// it say why, and `migrate --down` refuses with them before it changes anything.
pub const IRREVERSIBLE: &str = "-- irreversible:";

/// One schema migration: a version, the SQL that applies and reverts it, and the oldest
/// store that still runs on the schema once it is applied.
///
/// The SQL is a template: `{table}`, `{schema}`, `{schema_prefix}` and `{name}` are
/// replaced by [`crate::TableName::render`] before it runs. Nothing applies a migration
/// behind the host's back: the host calls the backend's `migrate` or prints the SQL.
///
/// Migrations are written expand/contract. An *expanding* migration only adds (a column
/// with a default, an index, a function under a new name): the stores of earlier schema
/// versions keep working on it, so it is built with [`Migration::compatible_from`] naming
/// the oldest of them. A *contracting* one removes or changes what older stores use, and
/// keeps the default: only stores of its own version run on it. The database records
/// each applied migration's bound, so a store of an older release, which does not know
/// the newer migrations, still learns from the database whether it may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// The version, counting from 1; applied in ascending order.
    pub version: i64,
    /// A short description; with the version, it names the migration's files
    /// (`0003_key_heads.up.sql`).
    pub name: &'static str,
    /// The SQL that applies it.
    pub up: &'static str,
    /// The SQL that reverts it, keeping the rows, or a script that opens with
    /// [`IRREVERSIBLE`] and says why it cannot.
    pub down: &'static str,
    /// The oldest store schema version that runs on the schema once this migration is
    /// applied: the migration's own version unless [`Migration::compatible_from`] lowered
    /// it.
    pub oldest_compatible: i64,
}

impl Migration {
    /// A migration that only the stores of its own version run on (a contracting one,
    /// or one whose effect on older stores was never tested).
    pub const fn new(
        version: i64,
        name: &'static str,
        up: &'static str,
        down: &'static str,
    ) -> Self {
        Self {
            version,
            name,
            up,
            down,
            oldest_compatible: version,
        }
    }

    /// The same migration, declared expanding: the stores of schema `version` and later
    /// still run on the schema it leaves.
    pub const fn compatible_from(mut self, version: i64) -> Self {
        self.oldest_compatible = version;
        self
    }

    /// The name of the file the migration is applied from, as engine crates name them:
    /// `0003_key_heads.up.sql`.
    pub fn file_name(&self) -> String {
        format!("{:04}_{}.up.sql", self.version, self.name)
    }

    /// The checksum of the SQL that applies it, as recorded when it is applied: SHA-256
    /// of the template with its line endings made `\n`, in hex. A migration edited after
    /// a database applied it no longer matches, and `migrate` says so.
    pub fn checksum(&self) -> String {
        checksum(self.up)
    }

    /// Its version, name, oldest compatible version and checksum as SQL literals, in the
    /// order the record statements bind them, for a printed script; `text` opens each
    /// string literal (`N` where the engine wants it for Unicode text).
    pub fn record_literals(&self, text: &str) -> String {
        format!(
            "{}, {text}'{}', {}, {text}'{}'",
            self.version,
            self.name,
            self.oldest_compatible,
            self.checksum()
        )
    }

    /// Why it cannot be reverted, when a line of its down script's opening comments
    /// starts with [`IRREVERSIBLE`].
    pub fn irreversible(&self) -> Option<&'static str> {
        self.down
            .lines()
            .map(str::trim)
            .take_while(|l| l.is_empty() || l.starts_with("--"))
            .find_map(|l| l.strip_prefix(IRREVERSIBLE))
            .map(str::trim)
    }
}

/// SHA-256 of `sql` with its line endings made `\n`, in lowercase hex: a checkout that
/// turned them into `\r\n` still matches.
pub fn checksum(sql: &str) -> String {
    let digest = Sha256::digest(sql.replace("\r\n", "\n").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A stored function (or trigger function) of an engine's schema, kept in one source file
/// and applied by `migrate` after the numbered migrations. The database records the
/// revision and checksum it was applied at: `migrate` applies it again when this build's
/// revision is newer than the recorded one, or when a migration was applied in the same
/// run (a migration may restate what it needs), and never over a newer revision (an older
/// release's `migrate`, run after a rollback, leaves the newer release's function). Its
/// SQL creates or replaces, so applying it twice changes nothing.
///
/// A definition is the one place its function is written: a change to a function is a
/// change to its definition (and a higher revision), not a new migration. Callers of two
/// releases must coexist during a deploy, so a change that callers of the previous release
/// could not take (new parameters, other results) is a function under a new name, and the
/// old name is dropped by a contracting migration once no release in the window calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition {
    /// Its name, as recorded with its checksum (`claim`: the file `definitions/claim.sql`).
    pub name: &'static str,
    /// Its revision, counting from 1: raised with every change to its SQL.
    pub revision: i64,
    /// The SQL that creates or replaces it, a template as a migration's is.
    pub sql: &'static str,
}

/// What a database records of one applied [`Definition`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedDefinition {
    /// The definition's name.
    pub name: String,
    /// The revision applied.
    pub revision: i64,
    /// The checksum of the SQL it was applied from.
    pub checksum: String,
}

impl Definition {
    /// The checksum of its SQL, as [`Migration::checksum`] computes one.
    pub fn checksum(&self) -> String {
        checksum(self.sql)
    }
}

/// The highest version of `migrations`, which a store requires the database to be at.
pub fn latest_version(migrations: &[Migration]) -> i64 {
    migrations.iter().map(|m| m.version).max().unwrap_or(0)
}

/// What a database says about the schema of one outbox table: the newest migration it
/// applied and the oldest store version that runs on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordedSchema {
    /// The newest applied migration (`None`: none was ever applied).
    pub version: Option<i64>,
    /// The oldest store schema version that runs on it, as its migrations recorded it
    /// (`None`: recorded by a release before compatibility windows, which means only
    /// the stores of `version` itself).
    pub oldest_compatible: Option<i64>,
}

impl RecordedSchema {
    /// The recorded schema at `version`, from a release that recorded no window.
    pub fn exact(version: Option<i64>) -> Self {
        Self {
            version,
            oldest_compatible: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: Migration = Migration::new(3, "key_heads", "CREATE x;\n", "DROP x;\n");

    #[test]
    fn a_migration_runs_its_own_stores_unless_declared_expanding() {
        assert_eq!(M.oldest_compatible, 3);
        assert_eq!(M.compatible_from(2).oldest_compatible, 2);
        assert_eq!(M.file_name(), "0003_key_heads.up.sql");
    }

    #[test]
    fn the_checksum_is_the_sha256_of_the_template_whatever_its_line_endings() {
        assert_eq!(
            checksum(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(checksum("a\r\nb\n"), checksum("a\nb\n"));
        assert_ne!(checksum("a\nb\n"), checksum("a\nc\n"));
        assert_eq!(M.checksum(), checksum("CREATE x;\n"));
    }

    #[test]
    fn an_irreversible_down_says_why() {
        assert_eq!(M.irreversible(), None);
        let m = Migration::new(
            4,
            "x",
            "",
            "\n-- irreversible: the old rows were rewritten\nSELECT 1;\n",
        );
        assert_eq!(m.irreversible(), Some("the old rows were rewritten"));
        let later = Migration::new(
            5,
            "y",
            "",
            "-- Back to version 4.\n-- irreversible: x is gone\nSELECT 1;\n",
        );
        assert_eq!(later.irreversible(), Some("x is gone"));
        let in_code = Migration::new(6, "z", "", "SELECT 1;\n-- irreversible: too late\n");
        assert_eq!(in_code.irreversible(), None);
    }
}
