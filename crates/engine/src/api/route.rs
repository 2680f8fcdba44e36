//! Which verb a request on a resource path performs, or why it is refused, decided from the
//! path, the method and what the kind serves alone: nothing is read before this.
//!
//! Custom resources follow apiextensions-apiserver's `crdHandler`. The verb comes from the
//! method (kube's `RequestInfo`: POST create, GET and HEAD get, list or watch, PUT update,
//! PATCH patch, DELETE delete or deletecollection, any other method no verb at all); a path
//! the CRD's scope does not serve is handed to the delegate (a plain 404); a subresource the
//! CRD does not enable is a NotFound of the object; and each endpoint refuses the verbs it
//! has not with 405 `<verb> is not supported on resources of kind ...`. Built-in kinds are
//! go-restful routes, which refuse an unrouted method without naming a verb.

use super::request::Target;
use crate::resources::rest::Subresource;
use crate::status::{ApiError, GroupResource};
use axum::http::Method;

/// What a request does, as kube's `RequestInfo.Verb` names it (a watch is a list here;
/// the query tells them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
    /// A `/watch/` path's verb (a list with `?watch=` stays a list until its query is read).
    Watch,
}

impl Verb {
    /// kube's verb for `method` on a path that names an object or not; `None` for a method
    /// kube maps to no verb (OPTIONS, ...).
    pub fn of(method: &Method, named: bool) -> Option<Verb> {
        match *method {
            Method::POST => Some(Verb::Create),
            Method::GET | Method::HEAD if named => Some(Verb::Get),
            Method::GET | Method::HEAD => Some(Verb::List),
            Method::PUT => Some(Verb::Update),
            Method::PATCH => Some(Verb::Patch),
            Method::DELETE if named => Some(Verb::Delete),
            Method::DELETE => Some(Verb::DeleteCollection),
            _ => None,
        }
    }

    /// The verb's name in kube's messages.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Watch => "watch",
        }
    }
}

/// What a request comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// Nothing serves the path: kube's plain-text `404 page not found`.
    Unserved,
    /// Refused with this Status before anything is read.
    Refused(ApiError),
    /// `verb` on this endpoint. A create ignores the name on the path, and an update or a
    /// patch without one is refused by its handler (a patch checks its type first).
    Serve { sub: Subresource, verb: Verb },
}

/// What routing needs to know of a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindRoutes {
    pub resource: GroupResource,
    pub namespaced: bool,
    pub status: bool,
    pub scale: bool,
    /// A custom resource (served by the CRD handler's rules rather than go-restful's).
    pub custom: bool,
    /// A kind that only takes POST on its collection (the access reviews).
    pub create_only: bool,
    /// Whether DELETE on the collection deletes it (namespaces' does not).
    pub delete_collection: bool,
}

/// Routes a request for `kind` at `t` with `method`.
pub fn route(kind: &KindRoutes, t: &Target, method: &Method) -> Route {
    if kind.custom { custom(kind, t, method) } else { builtin(kind, t, method) }
}

fn custom(kind: &KindRoutes, t: &Target, method: &Method) -> Route {
    // Under `/watch/` kube's RequestInfo takes the verb from the path, whatever the method.
    let verb = if t.watch { Some(Verb::Watch) } else { Verb::of(method, t.name.is_some()) };
    // Across namespaces a namespaced kind only lists and watches; a cluster-scoped kind is
    // never under a namespace. kube hands both to its delegate, which knows no such path.
    if kind.namespaced && t.namespace.is_none() && !matches!(verb, Some(Verb::List | Verb::Watch)) {
        return Route::Unserved;
    }
    if !kind.namespaced && t.namespace.is_some() {
        return Route::Unserved;
    }
    let sub = match t.subresource.as_deref() {
        None => Subresource::Main,
        Some("status") if kind.status => Subresource::Status,
        Some("scale") if kind.scale => Subresource::Scale,
        Some(_) => {
            return Route::Refused(ApiError::not_found(&kind.resource, t.name.as_deref().unwrap_or_default()));
        }
    };
    match (sub, verb) {
        (Subresource::Main, Some(verb)) => Route::Serve { sub, verb },
        (_, Some(verb @ (Verb::Get | Verb::Update | Verb::Patch))) => Route::Serve { sub, verb },
        (_, verb) => Route::Refused(ApiError::method_not_supported(&kind.resource, verb.map_or("", Verb::name))),
    }
}

/// A built-in kind's routes are go-restful's: a path under its group version that none
/// of them matches is go-restful's JSON 404 ([`ApiError::no_route`]), not the plain one.
fn builtin(kind: &KindRoutes, t: &Target, method: &Method) -> Route {
    // go-restful routes `/watch/` paths of objects and collections for GET alone.
    if t.watch {
        return match (t.subresource.is_some() || kind.create_only, method == Method::GET) {
            (true, _) => Route::Unserved,
            (false, true) => Route::Serve { sub: Subresource::Main, verb: Verb::Watch },
            (false, false) => Route::Refused(ApiError::method_not_allowed()),
        };
    }
    if kind.namespaced && t.name.is_some() && t.namespace.is_none() {
        return Route::Refused(ApiError::no_route());
    }
    // Across namespaces a namespaced kind is only read: its route refuses other methods.
    if kind.namespaced && t.namespace.is_none() && method != Method::GET {
        return Route::Refused(ApiError::method_not_allowed());
    }
    if !kind.namespaced && t.namespace.is_some() {
        return Route::Refused(ApiError::no_route());
    }
    if kind.create_only {
        if t.name.is_some() || t.subresource.is_some() {
            return Route::Refused(ApiError::no_route());
        }
        if method != Method::POST {
            return Route::Refused(ApiError::method_not_allowed());
        }
    }
    let sub = match t.subresource.as_deref() {
        None => Subresource::Main,
        Some("status") if kind.status => Subresource::Status,
        Some("scale") if kind.scale => Subresource::Scale,
        // kube routes a namespace's `/finalize` for PUT alone; every other method is its 405.
        Some("finalize") if kind.resource == GroupResource::new("", "namespaces") && method == Method::PUT => {
            Subresource::Finalize
        }
        Some("finalize") if kind.resource == GroupResource::new("", "namespaces") => {
            return Route::Refused(ApiError::method_not_allowed());
        }
        Some(_) => return Route::Refused(ApiError::no_route()),
    };
    let named = t.name.is_some();
    let verb = match (method.clone(), named, sub) {
        (Method::GET, _, _) => Verb::of(method, named),
        (Method::PUT, true, _) => Some(Verb::Update),
        (Method::PATCH, true, _) => Some(Verb::Patch),
        (Method::POST, false, Subresource::Main) => Some(Verb::Create),
        (Method::DELETE, _, Subresource::Main) if named || kind.delete_collection => Verb::of(method, named),
        _ => None,
    };
    match verb {
        Some(verb) => Route::Serve { sub, verb },
        None => Route::Refused(ApiError::method_not_allowed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widgets() -> KindRoutes {
        KindRoutes {
            resource: GroupResource::new("g.example.com", "widgets"),
            namespaced: true,
            status: true,
            scale: true,
            custom: true,
            create_only: false,
            delete_collection: true,
        }
    }

    fn gizmos() -> KindRoutes {
        KindRoutes {
            resource: GroupResource::new("g.example.com", "gizmos"),
            namespaced: false,
            status: false,
            scale: false,
            ..widgets()
        }
    }

    fn target(ns: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>) -> Target {
        Target {
            group: "g.example.com".into(),
            version: "v1".into(),
            namespace: ns.map(String::from),
            plural: plural.into(),
            name: name.map(String::from),
            subresource: sub.map(String::from),
            watch: false,
            trailing: false,
        }
    }

    fn watching(t: Target) -> Target {
        Target { watch: true, ..t }
    }

    /// A route in short: `serve <sub> <verb>`, `unserved`, or `<code> <message>`.
    fn show(route: Route) -> String {
        match route {
            Route::Unserved => "unserved".into(),
            Route::Refused(e) => format!("{} {}", e.code, e.message),
            Route::Serve { sub, verb } => format!("serve {} {}", sub.name().unwrap_or("main"), verb.name()),
        }
    }

    #[test]
    fn custom_resources_route_as_the_crd_handler_does() {
        let m = |s: &str| Method::from_bytes(s.as_bytes()).expect("a method");
        let w = widgets();
        let g = gizmos();
        let ns = Some("team");
        let cases: Vec<(&KindRoutes, Target, &str, &str)> = vec![
            (&w, target(ns, "widgets", None, None), "GET", "serve main list"),
            (&w, target(ns, "widgets", None, None), "HEAD", "serve main list"),
            (&w, target(None, "widgets", None, None), "HEAD", "serve main list"),
            (&w, target(None, "widgets", None, None), "POST", "unserved"),
            (&w, target(None, "widgets", None, None), "OPTIONS", "unserved"),
            (&w, target(None, "widgets", Some("w1"), None), "GET", "unserved"),
            (&w, target(ns, "widgets", Some("w1"), None), "HEAD", "serve main get"),
            // kube creates from the body whatever name the path has.
            (&w, target(ns, "widgets", Some("w1"), None), "POST", "serve main create"),
            (&w, target(ns, "widgets", None, None), "PUT", "serve main update"),
            (&w, target(ns, "widgets", None, None), "DELETE", "serve main deletecollection"),
            (
                &w,
                target(ns, "widgets", None, None),
                "OPTIONS",
                "405  is not supported on resources of kind \"widgets.g.example.com\"",
            ),
            (
                &w,
                target(ns, "widgets", Some("w1"), Some("status")),
                "POST",
                "405 create is not supported on resources of kind \"widgets.g.example.com\"",
            ),
            (
                &w,
                target(ns, "widgets", Some("w1"), Some("scale")),
                "DELETE",
                "405 delete is not supported on resources of kind \"widgets.g.example.com\"",
            ),
            (&w, target(ns, "widgets", Some("w1"), Some("scale")), "HEAD", "serve scale get"),
            (&w, target(ns, "widgets", Some("w1"), Some("status")), "PATCH", "serve status patch"),
            // An unknown subresource is the object's NotFound, whatever the method.
            (
                &w,
                target(ns, "widgets", Some("w1"), Some("bogus")),
                "OPTIONS",
                "404 widgets.g.example.com \"w1\" not found",
            ),
            (
                &g,
                target(None, "gizmos", Some("g1"), Some("status")),
                "PUT",
                "404 gizmos.g.example.com \"g1\" not found",
            ),
            (&g, target(None, "gizmos", Some("g1"), Some("scale")), "GET", "404 gizmos.g.example.com \"g1\" not found"),
            (&g, target(ns, "gizmos", None, None), "GET", "unserved"),
            (&g, target(None, "gizmos", None, None), "PATCH", "serve main patch"),
            // `/watch/` paths watch, across namespaces too, named or not, whatever the method.
            (&w, watching(target(ns, "widgets", Some("w1"), None)), "GET", "serve main watch"),
            (&w, watching(target(None, "widgets", None, None)), "GET", "serve main watch"),
            (&w, watching(target(ns, "widgets", None, None)), "POST", "serve main watch"),
            (
                &w,
                watching(target(ns, "widgets", Some("w1"), Some("status"))),
                "GET",
                "405 watch is not supported on resources of kind \"widgets.g.example.com\"",
            ),
        ];
        for (kind, t, method, want) in cases {
            let got = show(route(kind, &t, &m(method)));
            assert_eq!(got, want, "{method} {t:?}");
        }
    }

    #[test]
    fn refusals_carry_kube_details() {
        let Route::Refused(e) =
            route(&widgets(), &target(Some("team"), "widgets", Some("w1"), Some("status")), &Method::DELETE)
        else {
            panic!("a refusal");
        };
        assert_eq!(
            e.to_json()["details"],
            serde_json::json!({"group": "g.example.com", "kind": "widgets"}),
            "no name, as NewMethodNotSupported"
        );
    }

    #[test]
    fn built_in_kinds_keep_their_routes() {
        let cms = KindRoutes {
            resource: GroupResource::new("", "configmaps"),
            status: false,
            scale: false,
            custom: false,
            ..widgets()
        };
        let t = target(Some("team"), "configmaps", Some("c"), None);
        assert_eq!(
            show(route(&cms, &t, &Method::POST)),
            "405 the server does not allow this method on the requested resource"
        );
        assert_eq!(show(route(&cms, &t, &Method::GET)), "serve main get");
        // go-restful's JSON 404 for whatever path under the group version no route matches.
        let t = target(Some("team"), "configmaps", Some("c"), Some("bogus"));
        assert_eq!(show(route(&cms, &t, &Method::GET)), "404 the server could not find the requested resource");
        let t = target(None, "configmaps", Some("c"), None);
        assert_eq!(show(route(&cms, &t, &Method::GET)), "404 the server could not find the requested resource");
        let namespaces = KindRoutes {
            resource: GroupResource::new("", "namespaces"),
            namespaced: false,
            delete_collection: false,
            ..cms.clone()
        };
        let t = target(Some("team"), "namespaces", None, None);
        assert_eq!(show(route(&namespaces, &t, &Method::POST)), "404 the server could not find the requested resource");
        let t = target(None, "namespaces", Some("team"), Some("finalize"));
        assert_eq!(
            show(route(&namespaces, &t, &Method::GET)),
            "405 the server does not allow this method on the requested resource"
        );
        assert_eq!(show(route(&namespaces, &t, &Method::PUT)), "serve finalize update");
        let t = target(None, "namespaces", None, None);
        assert_eq!(
            show(route(&namespaces, &t, &Method::DELETE)),
            "405 the server does not allow this method on the requested resource"
        );
        let t = target(None, "configmaps", None, None);
        assert_eq!(
            show(route(&cms, &t, &Method::POST)),
            "405 the server does not allow this method on the requested resource"
        );
    }
}
