//! SQL for `proxy_routes`: the routes a running proxy serves, written when it starts.

use super::{Result, Store};
use tracer_wire::hop::now_unix_ns;

/// A route as a proxy announced it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ServedRoute {
    pub seq: i64,
    pub name: String,
    pub role: String,
    pub listen: String,
    pub upstream: String,
    pub pid: i64,
    pub started_unix_ns: i64,
    pub stopped_unix_ns: Option<i64>,
}

/// What a proxy tells the database about one of its routes when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteAnnouncement {
    pub name: String,
    pub role: String,
    pub listen: String,
    pub upstream: String,
}

impl Store {
    /// Records the routes this process serves from now on; returns their row numbers.
    pub async fn announce_routes(&self, routes: &[RouteAnnouncement]) -> Result<Vec<i64>> {
        let pid = i64::from(std::process::id());
        let now = now_unix_ns();
        let mut tx = self.pool().begin().await?;
        let mut seqs = Vec::with_capacity(routes.len());
        for route in routes {
            let seq: i64 = sqlx::query_scalar(
                "insert into proxy_routes (name, role, listen, upstream, pid, started_unix_ns)
                 values (?1, ?2, ?3, ?4, ?5, ?6) returning seq",
            )
            .bind(&route.name)
            .bind(&route.role)
            .bind(&route.listen)
            .bind(&route.upstream)
            .bind(pid)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            seqs.push(seq);
        }
        tx.commit().await?;
        Ok(seqs)
    }

    /// Marks announced routes as no longer served.
    pub async fn retire_routes(&self, seqs: &[i64]) -> Result<()> {
        let now = now_unix_ns();
        for seq in seqs {
            sqlx::query("update proxy_routes set stopped_unix_ns = ?2 where seq = ?1")
                .bind(seq)
                .bind(now)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }

    /// Routes named `name` whose proxy has not said it stopped, newest first.
    pub async fn served_routes_named(&self, name: &str) -> Result<Vec<ServedRoute>> {
        Ok(sqlx::query_as::<_, ServedRoute>(
            "select * from proxy_routes where name = ?1 and stopped_unix_ns is null
             order by started_unix_ns desc, seq desc",
        )
        .bind(name)
        .fetch_all(self.pool())
        .await?)
    }

    /// Every announcement of routes named `name`, served or stopped, newest first (`tracer fork`
    /// takes a stopped proxy's addresses).
    pub async fn routes_named(&self, name: &str) -> Result<Vec<ServedRoute>> {
        Ok(sqlx::query_as::<_, ServedRoute>(
            "select * from proxy_routes where name = ?1 order by started_unix_ns desc, seq desc",
        )
        .bind(name)
        .fetch_all(self.pool())
        .await?)
    }
}
