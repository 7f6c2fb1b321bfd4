//! Another context is connected (`:ctx`, a restored workspace's): the
//! browser starts over on it, remembering what each context showed.

use super::*;

impl App {
    pub(super) fn on_connected(
        &mut self,
        cluster: ClusterId,
        context: String,
        namespace: String,
        contexts: Vec<String>,
    ) -> Vec<Effect> {
        self.clusters.insert(context.clone(), cluster.clone());
        self.cluster = cluster;
        // Coming back to a context finds the namespaces it showed
        // (the one given with -n, say), as k9s does.
        self.scopes_by_context.insert(
            self.context.clone(),
            (self.scope.clone(), self.scope_is_home),
        );
        let remembered = self.scopes_by_context.get(&context).cloned();
        // A question about the other cluster's pods is void, and so
        // is a form for them (the same names here are other pods).
        if matches!(self.mode, Mode::ConfirmDelete(..) | Mode::Fleet(_)) {
            self.mode = Mode::Normal;
        }
        if !self.contexts_used.contains(&context) {
            self.contexts_used.push(context.clone());
        }
        self.context = context;
        self.home_namespace = namespace.clone();
        self.contexts = contexts;
        self.forget_narrowing();
        // The list shows this cluster's pods, and those of the
        // others `:ctx a,b` named (none: this one alone).
        self.others = std::mem::take(&mut self.next_others)
            .iter()
            .filter(|c| **c != self.context)
            .map(|c| other_clusters::OtherCluster::new(c))
            .collect();
        self.first_tag = self.shows_several().then(|| self.context.as_str().into());
        self.marks_read = None;
        self.pods.clear();
        // A query for the other cluster's pods would hide these
        // without a word: it goes, a key away (`/` then `↑`).
        let filtered = self
            .pods
            .query()
            .filter(|q| !q.is_empty())
            .map(str::to_string);
        if let Some(query) = &filtered {
            self.last_filter = query.clone();
            self.pods.set_filter("");
        }
        self.namespaces.clear();
        self.namespaces_listed = false;
        self.connection.connecting();
        self.message = Some(info(match filtered {
            Some(query) => format!(
                "Switched to context {}; the filter {query:?} is cleared (/ then ↑ brings it back).",
                self.context
            ),
            None => format!("Switched to context {}.", self.context),
        }));
        (self.scope, self.scope_is_home) = match (remembered, &self.scope) {
            (Some(remembered), _) => remembered,
            (None, Scope::All) => (Scope::All, false),
            (None, Scope::Namespaces(_)) => (Scope::Namespaces(vec![namespace]), true),
        };
        self.scope_fallbacks.clear();
        self.refused.clear();
        self.view = View::Pods;
        let mut effects = vec![Effect::WatchPods(self.scope_of(&self.first_tag))];
        effects.extend(
            self.others
                .iter()
                .map(|o| Effect::ConnectContext(o.context.to_string())),
        );
        effects
    }
}
