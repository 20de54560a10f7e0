// WorkerManager: the TPU VM workers you can log into. Every node whose workers are sandboxes
// (Node::sandbox, decided at create by Decide()) has one sandbox::WorkerBox per worker, and the
// node's state drives them — never the other way round:
//   CREATING, STARTING      boot every worker: its files (worker_files.h), its init, SSH on its
//                           own loopback address, the metadata server there, the users of its
//                           ssh-keys, then the startup script; READY waits until every worker
//                           answers SSH (Ready(), NodeManager's ready gate) or the boot timed out
//   STOPPING, DELETING      SIGTERM to every process, SIGKILL after the grace; files kept
//   deleted                 the files wiped
//   PREEMPTED               as STOPPING (the metadata says preempted=TRUE from the change on)
//   maintenance started     as STOPPING (maintenance-event is TERMINATE_ON_HOST_MAINTENANCE from
//                           the change on); ended: booted again
// Users follow the node's and the project's ssh-keys on change (worker_sync.cpp): at boot, when a
// transition of the node completes (an update's included) or another replica changed it, when the
// project's commonInstanceMetadata changes, and when a google-ssh key expires — never by polling.
// Every boot, stop, kill, login failure, startup-script exit and refused key is an event.
//
// Threads: observers (OnNodeStateChanged, OnMaintenance) only queue work; a node's work runs in
// order on a small pool of threads (a boot or stop never waits behind another node's); a timer
// thread queues the users' update when a key expires and checks for dead workers every second;
// the sandbox::Reactor thread accepts SSH connections and reads output. State is guarded by mu_;
// each node's queue by its own mutex.
//
// Ownership: borrows the NodeManager and ProjectMetadata (they must outlive it); owns every
// WorkerBox. Stop() (also the destructor) kills every worker and keeps their files.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/event_repository.h"
#include "sandbox/reactor.h"
#include "sandbox/slice_network.h"
#include "sandbox/support.h"
#include "sandbox/worker_box.h"
#include "service/nodes/node.h"
#include "service/nodes/node_manager.h"
#include "service/projects/project_metadata.h"
#include "service/workers/guest_metadata.h"
#include "service/workers/host_capacity.h"

namespace tpuemu::service {

struct WorkerOptions {
  bool enabled = false;         // run sandboxes; false: nodes say `reason` (Decide)
  std::string disabled_reason;  // one line, when !enabled ("" = not considered at all)
  sandbox::Support support;     // sandbox::Probe's, when enabled
  std::string dir;              // <dir>/<node uid>/<worker>: each worker's files
  uint16_t ssh_port = 22;       // every worker's SSH port, on its own address
  int network = 1;              // workers' addresses: 127.<network>.0.0/16 (ClaimWorkerNetwork)
  std::string subnet = "10.1.0.0/16";  // their internal addresses' range (Node::Sandbox::subnet)
  int64_t memory_limit_bytes = int64_t{4} << 30;  // per worker (cgroup); 0 = none
  int64_t pids_limit = 4096;                      // per worker (cgroup); 0 = none
  int64_t disk_bytes = 0;           // per worker: its boot disk (sandbox::BootSpec); 0 = none
  int64_t disk_floor_bytes = 0;     // no worker boots below this much free space on the host
  int64_t stop_grace_ms = 10000;    // SIGTERM -> SIGKILL: stop, preemption, maintenance
  int64_t boot_timeout_ms = 60000;  // a node's boot, all workers together
  int max_workers_per_node = 32;    // larger nodes are not sandboxed (they say why); at most 62
  int max_workers = 1024;           // sandboxed workers of all live nodes together
  // The host's budgets for all sandboxed workers together (host_capacity.h; 0 = none): the sum of
  // their memory limits, of their pids limits, of their boot disks.
  int64_t memory_budget_bytes = 0;
  int64_t pids_budget = 0;
  int64_t disk_budget_bytes = 0;
  int64_t startup_log_max_bytes = 1 << 20;  // the startup script's output kept per boot
  int threads = 4;                          // boot/stop threads
  // SSH budgets per worker (docs/workers.md, "Budgets"), as sshd's MaxStartups gives a real VM:
  // connections that have not logged in yet (waiting for their sshd or talking to it, at most
  // sshd's LoginGraceTime) beyond `ssh_max_startups` are closed at once, as are connections
  // beyond `ssh_max_connections` in all (a bound that holds even if a client could make sshd's log
  // say it logged in).
  int ssh_max_startups = 10;
  int ssh_max_connections = 100;
  int ssh_threads = 2;  // threads that start sshd for accepted connections, in turn per worker
};

// What the composition root wires: the metadata server and the workers' API endpoint (api/) on
// each slice network, and the events feed.
struct WorkerHooks {
  // Serve, to the workers of slice network `network`, the metadata server on `metadata_fd`
  // (169.254.169.254:80 there) and the TPU API acting for `project` on `api_fd`
  // (169.254.169.254:8470): listening sockets in that network (sandbox::SliceNetwork::Listen),
  // which the hook takes over. WorkerAt(network, ip) says which worker a peer is.
  std::function<Status(const std::string& network, int metadata_fd, int api_fd,
                       const std::string& project)>
      serve_network;
  std::function<void(const std::string& network)> unserve_network;
  std::function<void(db::EventRow event)> record_event;
};

class WorkerManager {
 public:
  WorkerManager(NodeManager& nodes, ProjectMetadata& projects, WorkerOptions options,
                WorkerHooks hooks);
  ~WorkerManager();  // Stop()
  WorkerManager(const WorkerManager&) = delete;
  WorkerManager& operator=(const WorkerManager&) = delete;

  const WorkerOptions& options() const { return options_; }
  // tpuemud's API as the workers reach it (known once the server listens; before any boot).
  void SetApiEndpoint(std::string endpoint);

  // NodeManager's sandbox policy: whether a node being created gets sandboxes, and why not.
  // Sandboxed, it holds its share of the host's capacity (host_capacity.h) from here until it is
  // deleted (or Abandon); RESOURCE_EXHAUSTED naming the budget when the host cannot boot it.
  Result<Node::Sandbox> Decide(const Node& node);
  // The create Decide answered wrote no node: what it reserved goes back.
  void Abandon(const Node& node);
  // A queued resource starts provisioning nodes of `node_workers` workers each: holds the host's
  // capacity for all of them at once (each node's Decide takes its share). RESOURCE_EXHAUSTED as
  // Decide's when the host cannot boot them all. Nodes that would not be sandboxed hold nothing.
  Status ReserveForQueuedResource(const std::string& queued_resource,
                                  const std::vector<int>& node_workers);
  // What the queued resource holds that its nodes did not take goes back.
  void ReleaseQueuedResource(const std::string& queued_resource);
  // Called (outside every lock of this class) when capacity went back to the host: a node was
  // deleted or a queued resource gave back what it held. Set before the first write.
  void SetOnCapacityFreed(std::function<void()> freed) { on_capacity_freed_ = std::move(freed); }
  const HostCapacity& capacity() const { return capacity_; }
  // NodeManager's ready gate: false while node `node_name`'s workers boot (within the timeout).
  // Called as every transition of the node completes (an update's too): it also queues the
  // account agent, whose input may have changed with the node's metadata.
  bool Ready(const std::string& node_name);
  // NodeManager's observer (queues work, never blocks).
  void OnNodeStateChanged(const Node& node, NodeState previous);
  // Another replica changed node `name` (the change feed; `node` null when it was deleted): the
  // workers this replica runs for it follow, as for a local change.
  void OnRemoteNodeChange(const std::string& name, const Node* node);
  // A maintenance event started or ended on node `node_name` (the fault listener).
  void OnMaintenance(const std::string& node_name, bool started);
  // After NodeManager::Recover: boots the workers of every sandboxed node that should run.
  Status Recover();
  // Kills every worker and wipes every worker's files (POST /_emulator/reset).
  void Reset();
  // Kills every worker, keeps the files; stops the threads. Idempotent.
  void Stop();

  // Which worker is at internal address `ip` on slice network `network`: {node name, worker};
  // NOT_FOUND for any other peer (the metadata server answers each worker from its address).
  Result<std::pair<std::string, int>> WorkerAt(const std::string& network,
                                               const std::string& ip) const;

  // GET …/nodes/N/workers: {"workers": [{workerId, hostname, ipAddress, sshPort, state, error,
  // startupScript: {state, exitCode}, sshCommand, memoryBytes, processes}]}; a node without
  // sandboxes lists its workers with state "NOT_SANDBOXED" and the reason.
  nlohmann::json Describe(const Node& node);
  // The startup script's output of the worker's last boot, from byte `offset`.
  Result<std::string> StartupScriptOutput(const Node& node, int worker, int64_t offset) const;
  // The worker's SSH host public key (guest attribute hostkeys/ssh-ed25519); NOT_FOUND when the
  // node has no sandboxes or the worker never booted.
  Result<std::string> HostKey(const Node& node, int worker) const;
  // The metadata tree worker `worker` of `node_name` sees now (guest_metadata.h).
  Result<nlohmann::json> GuestTree(const std::string& node_name, int worker) const;

  // Sandboxed workers running now (benchmarks, /metrics).
  int RunningWorkers() const;

  // Where the console's SSH-in-browser logs in (service/workers/console_terminal.h).
  struct ConsoleLogin {
    std::string ip;        // the worker's external address
    uint16_t port = 22;    // its SSH port
    std::string host_key;  // "ssh-ed25519 AAAA…", for known_hosts
  };
  // Makes `user` a user of node `node_name`'s workers with `public_key` ("ssh-ed25519 AAAA…")
  // until `expire_unix_ms`, as the google-ssh key the Cloud console adds for its SSH-in-browser
  // (worker_console.cpp): kept here, not written to the node's metadata, expiring as such keys
  // do, and applied to worker `worker`'s accounts before this returns. FAILED_PRECONDITION when
  // that worker does not run; INVALID_ARGUMENT for a user name the agent would refuse.
  Result<ConsoleLogin> AddConsoleKey(const std::string& node_name, int worker,
                                     const std::string& user, const std::string& public_key,
                                     int64_t expire_unix_ms);

 private:
  enum class WorkerState { kOff, kBooting, kRunning, kFailed };
  struct Worker {
    int index = 0;
    std::string ip;
    WorkerState state = WorkerState::kOff;
    std::string error;
    std::shared_ptr<sandbox::WorkerBox> box;
    int ssh_listener = 0;
    std::string applied_accounts;        // the account agent's last successful input
    std::string startup_state = "NONE";  // NONE, RUNNING, EXITED
    int startup_exit_code = 0;
    int64_t startup_log_bytes = 0;
    // SSH connections accepted and not ended: all, and those not logged in yet.
    int ssh_connections = 0;
    int ssh_unauthenticated = 0;
    bool ssh_dropping = false;  // dropped connections since the last one accepted (logged once)
  };
  // A slice's private network and what tpuemud serves on it; shared by the nodes of a multislice
  // queued resource, made when the first of them boots, gone (listeners too) when the last stops.
  struct Network {
    std::string name;  // the node's name, or "queuedResources/<qr>" for a multislice's
    std::unique_ptr<sandbox::SliceNetwork> slice;
  };
  struct NodeWorkers {
    std::string name;
    Node node;                         // as last seen
    std::shared_ptr<Network> network;  // while its workers run; guarded by mu_
    bool want_running = false;
    bool booting = false;
    int64_t boot_deadline_ms = 0;
    std::vector<Worker> workers;
    // The node's work, in order (guarded by queue_mu).
    std::mutex queue_mu;
    std::deque<std::function<void()>> queue;
    bool draining = false;
    // ssh-keys (guarded by mu_): a SyncAccountsSoon is queued and has not read the node yet; the
    // earliest expiry of a key applied (unix ms, 0: none); the refused lines last reported.
    bool keys_sync_queued = false;
    int64_t keys_expire_ms = 0;
    std::string reported_rejections;
    // The console's keys (AddConsoleKey): {expiry unix ms, ssh-keys line}; guarded by mu_.
    std::vector<std::pair<int64_t, std::string>> console_keys;
  };

  // Gives back the host's capacity `node` held (none: nothing happens).
  void ReleaseNode(const Node& node);
  void Post(const std::shared_ptr<NodeWorkers>& nw, std::function<void()> work);
  std::shared_ptr<NodeWorkers> Entry(const Node& node);  // made if missing
  void Boot(const std::shared_ptr<NodeWorkers>& nw);
  void BootWorker(const std::shared_ptr<NodeWorkers>& nw, const Node& node, int w,
                  const GuestContext& context);
  void StopWorkers(const std::shared_ptr<NodeWorkers>& nw, std::chrono::milliseconds grace,
                   const std::string& why);
  void Wipe(const std::shared_ptr<NodeWorkers>& nw);
  void StartStartupScript(const std::shared_ptr<NodeWorkers>& nw, const Node& node, int w);
  void OnSshConnection(const std::string& node_name, int w, int fd);
  void OnSshdLog(const std::string& node_name, int w, const std::string& line);
  // An SSH connection accepted for worker `w` of `nw`, waiting for a thread to start its sshd.
  struct SshStart {
    std::shared_ptr<NodeWorkers> nw;
    int w = 0;
    int fd = -1;
  };
  void StartSshThreads();
  void StopSshThreads();  // closes the connections still waiting
  void SshLoop();  // an SSH thread: starts sshd for waiting connections, one worker at a time
  void StartSshd(SshStart start);
  // Adds to worker `w`'s SSH counts (negative: a connection logged in or ended).
  void CountSsh(NodeWorkers& nw, int w, int unauthenticated, int connections);
  Status SyncAccounts(const std::shared_ptr<NodeWorkers>& nw, const Node& node, bool force);
  // Queues SyncAccounts with the node as stored now, if its workers should run.
  void SyncAccountsSoon(const std::string& node_name);
  void OnProjectMetadataChanged(const std::string& project);  // "": every project
  void SyncLoop();
  GuestContext ContextFor(const Node& node) const;
  // The running network of node's slice, made (and served) if there is none; null with the
  // reason on failure.
  Result<std::shared_ptr<Network>> AcquireNetwork(const Node& node);
  void Event(const Node& node, int w, const std::string& state, const std::string& message);

  NodeManager& nodes_;
  ProjectMetadata& projects_;
  const WorkerOptions options_;
  const WorkerHooks hooks_;
  HostCapacity capacity_;  // keyed by node uid (thread-safe on its own)
  std::function<void()> on_capacity_freed_;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<NodeWorkers>> nodes_by_name_;  // guarded by mu_
  std::mutex networks_mu_;  // held while a network is made, so that a multislice makes one
  std::map<std::string, std::weak_ptr<Network>> networks_;  // guarded by networks_mu_
  std::string api_endpoint_;                                // guarded by mu_
  bool stopped_ = false;                                    // guarded by mu_

  // The pool that runs nodes' queues.
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::deque<std::shared_ptr<NodeWorkers>> ready_queues_;  // guarded by pool_mu_
  bool pool_stopping_ = false;                             // guarded by pool_mu_
  std::vector<std::thread> pool_;

  // The SSH threads. The Reactor thread only accepts, counts and queues (OnSshConnection); each
  // worker has its own queue, at most ssh_max_startups long (a waiting connection is not logged
  // in), and the threads take one connection of each worker in turn, so one worker's flood
  // delays no other worker's logins.
  using SshKey = std::pair<const NodeWorkers*, int>;  // a worker
  std::mutex ssh_mu_;
  std::condition_variable ssh_cv_;
  std::map<SshKey, std::deque<SshStart>> ssh_waiting_;  // guarded by ssh_mu_
  std::deque<SshKey> ssh_turns_;  // workers with waiting connections, in turn; guarded by ssh_mu_
  bool ssh_stopping_ = false;     // guarded by ssh_mu_
  std::vector<std::thread> ssh_pool_;

  std::unique_ptr<sandbox::Reactor> reactor_;  // null when !enabled
  int project_listener_ = 0;                   // ProjectMetadata's listener id (0: none)
  std::atomic<bool> sync_stop_{false};
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  bool sync_rearm_ = false;  // an earlier key expiry is due; guarded by sync_mu_
  std::thread sync_thread_;
};

}  // namespace tpuemu::service
