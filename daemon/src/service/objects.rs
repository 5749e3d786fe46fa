//! The daemon's objects on a message bus, answered by its own code instead
//! of zbus's object server. zbus's server shows every object to every
//! caller: `GetManagedObjects`, `Properties` of any volume, `Introspect`
//! listing every volume's path, and the ObjectManager's signals sent to the
//! whole bus. Here a caller sees a volume only if it is theirs, or if they
//! are root or allowed `org.tcd.manage-others`; to anyone else it does not
//! exist (the same `UnknownObject` as a path never used). Volume signals go
//! to the clients allowed to see that volume by their unique name, never to
//! the bus at large; a client is known once it has called the daemon.
//!
//! Calls to `org.tcd.Manager1` are dispatched to [`Manager`] through
//! zbus's generated code, as its object server would.

use super::authority::Action;
use super::manager::Manager;
use super::volume::{self, MANAGER_PATH, VOLUMES_PATH, VolumeObject};
use super::{Peer, Shared};
use crate::mounts::Mounted;
use futures_lite::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use zbus::fdo;
use zbus::message::{Header, Message, Type};
use zbus::object_server::{DispatchResult2, Interface, SignalEmitter};
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const OBJECT_MANAGER: &str = "org.freedesktop.DBus.ObjectManager";
const INTROSPECTABLE: &str = "org.freedesktop.DBus.Introspectable";
const PEER: &str = "org.freedesktop.DBus.Peer";
const MANAGER: &str = "org.tcd.Manager1";
const VOLUME: &str = "org.tcd.Volume1";

/// One volume's interfaces and properties, as `GetManagedObjects` and
/// `InterfacesAdded` carry them.
type Interfaces = HashMap<String, HashMap<String, OwnedValue>>;

/// The bus clients that called the daemon, by unique name: who they are,
/// and whether they may see every volume.
#[derive(Default)]
struct Callers {
    known: Mutex<HashMap<String, Known>>,
}

#[derive(Clone)]
struct Known {
    peer: Peer,
    /// polkit's `manage-others` answer, asked once, when first needed.
    sees_all: Option<bool>,
}

impl Callers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Known>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What [`Shared`] needs to announce volumes on the bus.
pub struct BusView {
    conn: zbus::Connection,
    callers: Callers,
    /// The owner of each volume announced, for its `InterfacesRemoved`
    /// (sent after the volume left the table).
    owners: Mutex<HashMap<u32, u32>>,
    /// zbus's generated code wants an object server; the daemon's objects
    /// use none, so one of a private connection stands in.
    spare: zbus::ObjectServer,
    _spare_conns: (zbus::Connection, zbus::Connection),
}

impl BusView {
    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<u32, u32>> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the client `name` may see the volumes of `owner`. An
    /// unknown client sees nothing.
    async fn may_see(&self, shared: &Shared, name: &str, owner: u32) -> bool {
        let Some(known) = self.callers.lock().get(name).cloned() else {
            return false;
        };
        if known.peer.uid == 0 || known.peer.uid == owner {
            return true;
        }
        if let Some(all) = known.sees_all {
            return all;
        }
        let all = shared
            .authority()
            .check(&known.peer, Action::ManageOthers)
            .await
            .is_ok();
        if let Some(k) = self.callers.lock().get_mut(name) {
            k.sees_all = Some(all);
        }
        all
    }

    /// The clients that may see the volumes of `owner`.
    async fn audience(&self, shared: &Shared, owner: u32) -> Vec<String> {
        let names: Vec<String> = self.callers.lock().keys().cloned().collect();
        let mut to = Vec::new();
        for name in names {
            if self.may_see(shared, &name, owner).await {
                to.push(name);
            }
        }
        to
    }

    /// Sends one signal to each client of `to` (unicast).
    async fn tell<B>(&self, to: &[String], path: &str, interface: &str, member: &str, body: &B)
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        for name in to {
            if let Err(e) = self
                .conn
                .emit_signal(Some(name.as_str()), path, interface, member, body)
                .await
            {
                tracing::debug!("signal {member} to {name}: {e}");
            }
        }
    }

    /// A volume's interfaces with their properties (those of
    /// `Properties.GetAll`).
    async fn volume_interfaces(&self, m: &Mounted) -> Interfaces {
        let path = volume::object_path(m.id);
        let props = match SignalEmitter::new(&self.conn, path.as_str()) {
            Ok(emitter) => VolumeObject::new(m.clone(), None)
                .get_all(&self.spare, &self.conn, None, &emitter)
                .await
                .unwrap_or_default(),
            Err(_) => HashMap::new(),
        };
        HashMap::from([(VOLUME.to_owned(), props)])
    }

    /// `InterfacesAdded` for a new volume.
    pub async fn added(&self, shared: &Shared, m: &Mounted) {
        self.owners().insert(m.id, m.owner);
        let to = self.audience(shared, m.owner).await;
        let interfaces = self.volume_interfaces(m).await;
        self.tell(
            &to,
            MANAGER_PATH,
            OBJECT_MANAGER,
            "InterfacesAdded",
            &(volume::object_path(m.id), interfaces),
        )
        .await;
    }

    /// `InterfacesRemoved` for a dismounted volume.
    pub async fn removed(&self, shared: &Shared, id: u32) {
        let Some(owner) = self.owners().remove(&id) else {
            return;
        };
        let to = self.audience(shared, owner).await;
        self.tell(
            &to,
            MANAGER_PATH,
            OBJECT_MANAGER,
            "InterfacesRemoved",
            &(volume::object_path(id), vec![VOLUME]),
        )
        .await;
    }

    /// `PropertiesChanged` of a volume's `Backends`, `ReadOnly`, `State`,
    /// `MountPoint`, `Slot` and `Filesystem`.
    pub async fn changed(&self, shared: &Shared, m: &Mounted) {
        let to = self.audience(shared, m.owner).await;
        let mut changed: HashMap<&str, Value<'_>> = HashMap::new();
        changed.insert("Backends", Value::from(m.info.backends.clone()));
        changed.insert("ReadOnly", Value::from(m.read_only));
        changed.insert("State", Value::from(m.state.name()));
        changed.insert(
            "MountPoint",
            Value::from(
                m.mount_point
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
        );
        changed.insert("Slot", Value::from(m.slot));
        changed.insert(
            "Filesystem",
            Value::from(m.filesystem.clone().unwrap_or_default()),
        );
        let path = volume::object_path(m.id);
        self.tell(
            &to,
            path.as_str(),
            PROPERTIES,
            "PropertiesChanged",
            &(VOLUME, changed, Vec::<&str>::new()),
        )
        .await;
    }

    /// `AutoDismounted` of the manager, about one volume.
    pub async fn auto_dismounted(&self, shared: &Shared, m: &Mounted, reason: &str, error: &str) {
        let to = self.audience(shared, m.owner).await;
        self.tell(
            &to,
            MANAGER_PATH,
            MANAGER,
            "AutoDismounted",
            &(
                volume::object_path(m.id),
                &m.host_name,
                m.owner,
                reason,
                error,
            ),
        )
        .await;
    }
}

/// Header work.
impl BusView {
    /// `HeadersWritten` of the manager, to the clients that may see the
    /// volumes of the caller who wrote.
    pub async fn headers_written(&self, shared: &Shared, w: &super::Written) {
        let to = self.audience(shared, w.owner).await;
        self.tell(&to, MANAGER_PATH, MANAGER, "HeadersWritten", &w.body())
            .await;
    }
}

/// The policy.
impl BusView {
    /// `PolicyChanged` of the manager, to every client that called: the
    /// policy is open to everyone.
    pub async fn policy_changed(&self) {
        let to: Vec<String> = self.callers.lock().keys().cloned().collect();
        self.tell(&to, MANAGER_PATH, MANAGER, "PolicyChanged", &())
            .await;
    }
}

/// Volume health.
impl BusView {
    /// `PropertiesChanged` of a volume's `Health` and `Problems`, and the
    /// manager's `HealthChanged`, to the clients that may see it.
    pub async fn health_changed(
        &self,
        shared: &Shared,
        m: &Mounted,
        status: &str,
        problems: &[String],
    ) {
        let to = self.audience(shared, m.owner).await;
        let mut changed: HashMap<&str, Value<'_>> = HashMap::new();
        changed.insert("Health", Value::from(status));
        changed.insert("Problems", Value::from(problems.to_vec()));
        let path = volume::object_path(m.id);
        self.tell(
            &to,
            path.as_str(),
            PROPERTIES,
            "PropertiesChanged",
            &(VOLUME, changed, Vec::<&str>::new()),
        )
        .await;
        self.tell(
            &to,
            MANAGER_PATH,
            MANAGER,
            "HealthChanged",
            &(&path, &m.host_name, m.owner, status, problems),
        )
        .await;
    }
}

/// `emitter`, sending to the caller of `hdr` alone (on a bus; on a
/// peer-to-peer connection there is only the caller): a call's progress is
/// nobody else's business.
pub fn to_caller<'a>(emitter: SignalEmitter<'a>, hdr: &Header<'_>) -> SignalEmitter<'a> {
    match hdr.sender() {
        Some(sender) => emitter.set_destination(zbus::names::BusName::Unique(sender.to_owned())),
        None => emitter,
    }
}

/// The volume an object path names, if it names one (mounted or not).
fn volume_id(path: &str) -> Option<u32> {
    let n = path.strip_prefix(VOLUMES_PATH)?.strip_prefix('/')?;
    // Digits only, as the daemon makes them ("+1" or "01" name nothing).
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || (n.len() > 1 && n.starts_with('0'))
    {
        return None;
    }
    n.parse().ok()
}

/// Serves the daemon's objects on `conn` until the bus connection ends.
pub struct BusObjects {
    shared: Arc<Shared>,
    manager: Manager,
    view: Arc<BusView>,
}

impl BusObjects {
    pub async fn new(
        shared: Arc<Shared>,
        manager: Manager,
        conn: zbus::Connection,
    ) -> zbus::Result<BusObjects> {
        let (a, b) = std::os::unix::net::UnixStream::pair()?;
        let (server, client) = futures_lite::future::zip(
            zbus::connection::Builder::async_io_unix_stream(a)
                .server(zbus::Guid::generate())?
                .p2p()
                .build(),
            zbus::connection::Builder::async_io_unix_stream(b)
                .p2p()
                .build(),
        )
        .await;
        let (server, client) = (server?, client?);
        let view = Arc::new(BusView {
            conn,
            callers: Callers::default(),
            owners: Mutex::new(
                shared
                    .table
                    .list()
                    .iter()
                    .map(|m| (m.id, m.owner))
                    .collect(),
            ),
            spare: server.object_server().clone(),
            _spare_conns: (server, client),
        });
        Ok(BusObjects {
            shared,
            manager,
            view,
        })
    }

    pub fn view(&self) -> Arc<BusView> {
        Arc::clone(&self.view)
    }

    fn conn(&self) -> &zbus::Connection {
        &self.view.conn
    }

    /// Answers every method call to the daemon until the bus connection
    /// ends; returns why it ended. Sends on `ready` once it listens.
    pub async fn serve(self: Arc<Self>, ready: std::sync::mpsc::Sender<()>) -> String {
        let conn = self.conn().clone();
        // Forget clients as they leave the bus.
        let forget = match fdo::DBusProxy::new(&conn).await {
            Ok(dbus) => dbus.receive_name_owner_changed().await,
            Err(e) => return format!("cannot watch the bus: {e}"),
        };
        let mut forget = match forget {
            Ok(s) => s,
            Err(e) => return format!("cannot watch the bus: {e}"),
        };
        let me = Arc::clone(&self);
        conn.executor()
            .spawn(
                async move {
                    while let Some(change) = forget.next().await {
                        let Ok(args) = change.args() else { continue };
                        if args.new_owner().is_none() {
                            me.view.callers.lock().remove(args.name().as_str());
                        }
                    }
                },
                "tcd forgets departed clients",
            )
            .detach();
        let mut rule = zbus::MatchRule::builder().msg_type(Type::MethodCall);
        if let Some(me) = conn.unique_name() {
            match rule.destination(me.as_str()) {
                Ok(r) => rule = r,
                Err(e) => return format!("cannot receive calls: {e}"),
            }
        }
        let mut calls = match zbus::MessageStream::for_match_rule(rule.build(), &conn, None).await {
            Ok(s) => s,
            Err(e) => return format!("cannot receive calls: {e}"),
        };
        let _ = ready.send(());
        while let Some(msg) = calls.next().await {
            match msg {
                Ok(msg) => {
                    // Each call on a thread of its own, not on the
                    // connection's one executor thread: a call that blocks
                    // in a system call (a descriptor on a stalled
                    // filesystem, a slow user database) holds up only
                    // itself, and the connection keeps reading.
                    let me = Arc::clone(&self);
                    let task = std::sync::Arc::new(std::sync::Mutex::new(Some(msg)));
                    let on_thread = Arc::clone(&task);
                    let spawned =
                        std::thread::Builder::new()
                            .name("tcd-call".into())
                            .spawn(move || {
                                let msg = on_thread.lock().ok().and_then(|mut m| m.take());
                                if let Some(msg) = msg {
                                    zbus::block_on(me.handle(msg));
                                }
                            });
                    if spawned.is_err() {
                        // No thread to be had: answer on the executor.
                        let msg = task.lock().ok().and_then(|mut m| m.take());
                        if let Some(msg) = msg {
                            let me = Arc::clone(&self);
                            conn.executor()
                                .spawn(async move { me.handle(msg).await }, "tcd method call")
                                .detach();
                        }
                    }
                }
                Err(e) => return format!("the bus connection failed: {e}"),
            }
        }
        "the bus connection closed".into()
    }

    async fn handle(&self, msg: Message) {
        let hdr = msg.header();
        if let Err(e) = self.answer(&msg, &hdr).await {
            let _ = self.conn().reply_dbus_error(&hdr, e).await;
        }
    }

    /// Remembers who `hdr`'s sender is (once per client).
    async fn remember(&self, hdr: &Header<'_>) -> Option<String> {
        let name = hdr.sender()?.to_string();
        if self.view.callers.lock().contains_key(&name) {
            return Some(name);
        }
        let peer = self.manager.ctx.caller(hdr, self.conn()).await.ok()?;
        self.view
            .callers
            .lock()
            .entry(name.clone())
            .or_insert(Known {
                peer,
                sees_all: None,
            });
        Some(name)
    }

    async fn answer(&self, msg: &Message, hdr: &Header<'_>) -> fdo::Result<()> {
        let call = Call::of(msg, hdr)?;
        let caller = self.remember(hdr).await;
        // Any path answers a ping (the D-Bus specification says so).
        if call.iface == PEER {
            return self.answer_peer(&call).await;
        }
        if call.path == MANAGER_PATH {
            return self.answer_manager(&call, caller.as_deref()).await;
        }
        if let Some(id) = volume_id(&call.path) {
            let m = match self.shared.table.get(id) {
                Some(m) if self.sees(caller.as_deref(), &m).await => m,
                _ => return Err(call.unknown_object()),
            };
            return self.answer_volume(&call, m).await;
        }
        self.answer_folder(&call, caller.as_deref()).await
    }

    async fn answer_peer(&self, call: &Call<'_>) -> fdo::Result<()> {
        match call.member.as_str() {
            "Ping" => self.reply(call.hdr, &()).await,
            "GetMachineId" => {
                let id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
                    .iter()
                    .find_map(|f| std::fs::read_to_string(f).ok())
                    .map(|s| s.trim().to_owned())
                    .ok_or_else(|| fdo::Error::Failed("no machine id".into()))?;
                self.reply(call.hdr, &id).await
            }
            _ => Err(call.unknown_method()),
        }
    }

    async fn answer_manager(&self, call: &Call<'_>, caller: Option<&str>) -> fdo::Result<()> {
        let (msg, hdr, member) = (call.msg, call.hdr, &call.member);
        match call.iface.as_str() {
            MANAGER => {
                match self
                    .manager
                    .call(&self.view.spare, self.conn(), msg, member.as_ref())
                {
                    DispatchResult2::Async(f) => f.await,
                    _ => Err(call.unknown_method()),
                }
            }
            PROPERTIES => {
                let emitter = call.emitter(self.conn())?;
                self.properties(msg, hdr, member, &emitter, MANAGER, &self.manager)
                    .await
            }
            OBJECT_MANAGER if member.as_str() == "GetManagedObjects" => {
                // As `ListVolumes`: a listing looks at the hosts first, so
                // a deleted container shows failed at once.
                let app = Arc::clone(&self.shared.app);
                blocking::unblock(move || app.list_fresh()).await;
                let mut objects: HashMap<OwnedObjectPath, Interfaces> = HashMap::new();
                for m in self.visible(caller).await {
                    objects.insert(
                        volume::object_path(m.id),
                        self.view.volume_interfaces(&m).await,
                    );
                }
                self.reply(hdr, &objects).await
            }
            INTROSPECTABLE if member.as_str() == "Introspect" => {
                let mut xml = String::new();
                self.manager.introspect_to_writer(&mut xml, 2);
                fdo::ObjectManager.introspect_to_writer(&mut xml, 2);
                let xml = node_xml(&xml, &["volumes"]);
                self.reply(hdr, &xml).await
            }
            OBJECT_MANAGER | INTROSPECTABLE => Err(call.unknown_method()),
            _ => Err(call.unknown_interface()),
        }
    }

    async fn answer_volume(&self, call: &Call<'_>, m: Mounted) -> fdo::Result<()> {
        let (msg, hdr, member) = (call.msg, call.hdr, &call.member);
        let object = VolumeObject::new(m, Some(self.manager.ctx.clone()));
        match call.iface.as_str() {
            VOLUME => match object.call(&self.view.spare, self.conn(), msg, member.as_ref()) {
                DispatchResult2::Async(f) => f.await,
                _ => Err(call.unknown_method()),
            },
            PROPERTIES => {
                let emitter = call.emitter(self.conn())?;
                self.properties(msg, hdr, member, &emitter, VOLUME, &object)
                    .await
            }
            INTROSPECTABLE if member.as_str() == "Introspect" => {
                let mut xml = String::new();
                object.introspect_to_writer(&mut xml, 2);
                self.reply(hdr, &node_xml(&xml, &[])).await
            }
            INTROSPECTABLE => Err(call.unknown_method()),
            _ => Err(call.unknown_interface()),
        }
    }

    /// The folders above the objects: only their names, and under the
    /// volumes folder the caller's own volumes.
    async fn answer_folder(&self, call: &Call<'_>, caller: Option<&str>) -> fdo::Result<()> {
        let child = match call.path.as_str() {
            "/" => vec!["org".to_owned()],
            "/org" => vec!["tcd".to_owned()],
            "/org/tcd" => vec!["Tcd1".to_owned()],
            VOLUMES_PATH => self
                .visible(caller)
                .await
                .iter()
                .map(|m| m.id.to_string())
                .collect(),
            _ => return Err(call.unknown_object()),
        };
        match (call.iface.as_str(), call.member.as_str()) {
            (INTROSPECTABLE, "Introspect") => {
                let names: Vec<&str> = child.iter().map(String::as_str).collect();
                self.reply(call.hdr, &node_xml("", &names)).await
            }
            (INTROSPECTABLE, _) => Err(call.unknown_method()),
            _ => Err(call.unknown_interface()),
        }
    }

    /// Whether the caller named `caller` may see `m`.
    async fn sees(&self, caller: Option<&str>, m: &Mounted) -> bool {
        match caller {
            Some(name) => self.view.may_see(&self.shared, name, m.owner).await,
            None => false,
        }
    }

    /// The mounted volumes the caller may see.
    async fn visible(&self, caller: Option<&str>) -> Vec<Mounted> {
        let mut out = Vec::new();
        for m in self.shared.table.list() {
            if self.sees(caller, &m).await {
                out.push(m);
            }
        }
        out
    }

    /// `org.freedesktop.DBus.Properties` of one interface (all read-only).
    async fn properties(
        &self,
        msg: &Message,
        hdr: &Header<'_>,
        member: &str,
        emitter: &SignalEmitter<'_>,
        name: &str,
        object: &dyn Interface,
    ) -> fdo::Result<()> {
        let body = msg.body();
        let wrong = |e: zbus::Error| fdo::Error::InvalidArgs(e.to_string());
        let unknown = |i: &str| fdo::Error::UnknownInterface(format!("Unknown interface '{i}'"));
        match member {
            "Get" => {
                let (i, p): (String, String) = body.deserialize().map_err(wrong)?;
                if i != name {
                    return Err(unknown(&i));
                }
                let value = object
                    .get(&p, &self.view.spare, self.conn(), Some(hdr), emitter)
                    .await
                    .unwrap_or_else(|| {
                        Err(fdo::Error::UnknownProperty(format!(
                            "Unknown property '{p}'"
                        )))
                    })?;
                self.reply(hdr, &value).await
            }
            "GetAll" => {
                let (i,): (String,) = body.deserialize().map_err(wrong)?;
                if i != name {
                    return Err(unknown(&i));
                }
                let all = object
                    .get_all(&self.view.spare, self.conn(), Some(hdr), emitter)
                    .await?;
                self.reply(hdr, &all).await
            }
            "Set" => Err(fdo::Error::PropertyReadOnly(
                "the properties are read-only".into(),
            )),
            _ => Err(fdo::Error::UnknownMethod(format!(
                "Unknown method '{member}'"
            ))),
        }
    }

    async fn reply<B>(&self, hdr: &Header<'_>, body: &B) -> fdo::Result<()>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        if hdr
            .primary()
            .flags()
            .contains(zbus::message::Flags::NoReplyExpected)
        {
            return Ok(());
        }
        self.conn()
            .reply(hdr, body)
            .await
            .map_err(|e| fdo::Error::Failed(e.to_string()))
    }
}

/// An introspection document: the interfaces' XML, the standard ones, and
/// child nodes.
fn node_xml(interfaces: &str, children: &[&str]) -> String {
    let mut xml = String::from(
        "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n",
    );
    xml.push_str(interfaces);
    xml.push_str(STANDARD_XML);
    for c in children {
        xml.push_str(&format!("  <node name=\"{c}\"/>\n"));
    }
    xml.push_str("</node>\n");
    xml
}

const STANDARD_XML: &str = r#"  <interface name="org.freedesktop.DBus.Peer">
    <method name="Ping"/>
    <method name="GetMachineId">
      <arg type="s" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.Introspectable">
    <method name="Introspect">
      <arg type="s" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.Properties">
    <method name="Get">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg type="v" direction="out"/>
    </method>
    <method name="GetAll">
      <arg name="interface_name" type="s" direction="in"/>
      <arg type="a{sv}" direction="out"/>
    </method>
    <method name="Set">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg name="value" type="v" direction="in"/>
    </method>
    <signal name="PropertiesChanged">
      <arg name="interface_name" type="s"/>
      <arg name="changed_properties" type="a{sv}"/>
      <arg name="invalidated_properties" type="as"/>
    </signal>
  </interface>
"#;

/// One call's address: object, interface and member.
struct Call<'a> {
    msg: &'a Message,
    hdr: &'a Header<'a>,
    path: String,
    iface: String,
    member: zbus::names::MemberName<'static>,
}

impl<'a> Call<'a> {
    fn of(msg: &'a Message, hdr: &'a Header<'a>) -> fdo::Result<Call<'a>> {
        let missing = |what: &str| fdo::Error::Failed(format!("Missing {what}"));
        Ok(Call {
            msg,
            hdr,
            path: hdr
                .path()
                .ok_or_else(|| missing("object path"))?
                .to_string(),
            iface: hdr
                .interface()
                .ok_or_else(|| missing("interface"))?
                .to_string(),
            member: hdr.member().ok_or_else(|| missing("member"))?.to_owned(),
        })
    }

    fn emitter<'c>(&self, conn: &'c zbus::Connection) -> fdo::Result<SignalEmitter<'c>> {
        SignalEmitter::new(conn, self.path.clone()).map_err(|e| fdo::Error::Failed(e.to_string()))
    }

    fn unknown_object(&self) -> fdo::Error {
        fdo::Error::UnknownObject(format!("Unknown object '{}'", self.path))
    }

    fn unknown_method(&self) -> fdo::Error {
        fdo::Error::UnknownMethod(format!("Unknown method '{}'", self.member))
    }

    fn unknown_interface(&self) -> fdo::Error {
        fdo::Error::UnknownInterface(format!("Unknown interface '{}'", self.iface))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_daemons_own_volume_paths_name_volumes() {
        assert_eq!(volume_id("/org/tcd/Tcd1/volumes/7"), Some(7));
        assert_eq!(volume_id("/org/tcd/Tcd1/volumes/0"), Some(0));
        for p in [
            "/org/tcd/Tcd1/volumes",
            "/org/tcd/Tcd1/volumes/",
            "/org/tcd/Tcd1/volumes/07",
            "/org/tcd/Tcd1/volumes/x",
            "/org/tcd/Tcd1/volumes/7/8",
            "/org/tcd/Tcd1/volumes7",
            "/org/tcd/Tcd1/volumes/99999999999",
        ] {
            assert_eq!(volume_id(p), None, "{p}");
        }
    }

    #[test]
    fn introspection_lists_only_the_children_given() {
        let xml = node_xml("", &["3"]);
        assert!(xml.contains("<node name=\"3\"/>"));
        assert_eq!(xml.matches("<node name=").count(), 1);
        assert!(xml.contains("org.freedesktop.DBus.Properties"));
    }
}
