// The schemas of the discovery document (api/discovery_document.h), written in a small text form
// the builder parses: "Name {" opens a schema, one field per line, "}" closes it.
//   field string | boolean | integer | int64 | number | any | map T | array T | enum V1 V2 … | Ref
// A leading '+' marks a schema or field v2alpha1 has and v2 does not; a leading '-' one only v2
// has. Field names and types follow google/cloud/tpu/v2/cloud_tpu.proto (and v2alpha1's).
#include "api/discovery_document.h"

namespace tpuemu::api {

const char* DiscoverySchemaText() {
  return R"(
AcceleratorConfig {
  type enum TYPE_UNSPECIFIED V2 V3 V4 V5LITE_POD V5P V6E
  topology string
}
AcceleratorType {
  name string
  type string
  acceleratorConfigs array AcceleratorConfig
}
AccessConfig {
  externalIp string
}
AttachedDisk {
  sourceDisk string
  mode enum DISK_MODE_UNSPECIFIED READ_WRITE READ_ONLY
}
Empty {
}
GenerateServiceIdentityRequest {
}
GenerateServiceIdentityResponse {
  identity ServiceIdentity
}
GetGuestAttributesRequest {
  queryPath string
  workerIds array string
}
GetGuestAttributesResponse {
  guestAttributes array GuestAttributes
}
GuestAttributes {
  queryPath string
  queryValue GuestAttributesValue
}
GuestAttributesEntry {
  namespace string
  key string
  value string
}
GuestAttributesValue {
  items array GuestAttributesEntry
}
Guaranteed {
  minDuration string
  +reserved boolean
}
+BestEffort {
}
Interval {
  startTime string
  endTime string
}
ListAcceleratorTypesResponse {
  acceleratorTypes array AcceleratorType
  nextPageToken string
  unreachable array string
}
ListLocationsResponse {
  locations array Location
  nextPageToken string
}
ListNodesResponse {
  nodes array Node
  nextPageToken string
  unreachable array string
}
ListOperationsResponse {
  operations array Operation
  nextPageToken string
}
ListQueuedResourcesResponse {
  queuedResources array QueuedResource
  nextPageToken string
  unreachable array string
}
+ListReservationsResponse {
  reservations array Reservation
  nextPageToken string
}
ListRuntimeVersionsResponse {
  runtimeVersions array RuntimeVersion
  nextPageToken string
  unreachable array string
}
Location {
  name string
  locationId string
  displayName string
  labels map string
  metadata map any
}
-MultisliceParams {
  nodeCount integer
  nodeIdPrefix string
}
+MultiNodeParams {
  nodeCount integer
  nodeIdPrefix string
  workloadType enum WORKLOAD_TYPE_UNSPECIFIED THROUGHPUT_OPTIMIZED AVAILABILITY_OPTIMIZED
}
NetworkConfig {
  network string
  subnetwork string
  enableExternalIps boolean
  canIpForward boolean
  queueCount integer
}
NetworkEndpoint {
  ipAddress string
  port integer
  accessConfig AccessConfig
}
Node {
  name string
  description string
  acceleratorType string
  state enum STATE_UNSPECIFIED CREATING READY RESTARTING REIMAGING DELETING REPAIRING STOPPED STOPPING STARTING PREEMPTED TERMINATED HIDING HIDDEN UNHIDING UNKNOWN
  healthDescription string
  runtimeVersion string
  networkConfig NetworkConfig
  networkConfigs array NetworkConfig
  cidrBlock string
  serviceAccount ServiceAccount
  createTime string
  schedulingConfig SchedulingConfig
  networkEndpoints array NetworkEndpoint
  health enum HEALTH_UNSPECIFIED HEALTHY TIMEOUT UNHEALTHY_TENSORFLOW UNHEALTHY_MAINTENANCE
  labels map string
  metadata map string
  tags array string
  id int64
  dataDisks array AttachedDisk
  apiVersion enum API_VERSION_UNSPECIFIED V1_ALPHA1 V1 V2_ALPHA1 V2
  symptoms array Symptom
  shieldedInstanceConfig ShieldedInstanceConfig
  acceleratorConfig AcceleratorConfig
  queuedResource string
  multisliceNode boolean
  +autocheckpointEnabled boolean
  +upcomingMaintenance UpcomingMaintenance
}
NodeSpec {
  parent string
  nodeId string
  -multisliceParams MultisliceParams
  +multiNodeParams MultiNodeParams
  node Node
}
Operation {
  name string
  metadata map any
  done boolean
  error Status
  response map any
}
OperationMetadata {
  createTime string
  endTime string
  target string
  verb string
  statusDetail string
  cancelRequested boolean
  apiVersion string
}
+PerformMaintenanceRequest {
}
+PerformMaintenanceQueuedResourceRequest {
  nodeNames array string
}
QueuedResource {
  name string
  createTime string
  tpu Tpu
  spot Spot
  guaranteed Guaranteed
  +bestEffort BestEffort
  queueingPolicy QueueingPolicy
  state QueuedResourceState
  reservationName string
}
QueuedResourceState {
  state enum STATE_UNSPECIFIED CREATING ACCEPTED PROVISIONING FAILED DELETING ACTIVE SUSPENDING SUSPENDED WAITING_FOR_RESOURCES
  stateInitiator enum STATE_INITIATOR_UNSPECIFIED USER SERVICE
  creatingData Empty
  acceptedData Empty
  provisioningData Empty
  failedData FailedData
  deletingData Empty
  activeData Empty
  suspendingData Empty
  suspendedData Empty
}
FailedData {
  error Status
}
QueueingPolicy {
  validUntilDuration string
  validUntilTime string
  validAfterDuration string
  validAfterTime string
  validInterval Interval
}
+Reservation {
  name string
  standard Standard
  state enum STATE_UNSPECIFIED APPROVED PROVISIONING ACTIVE DEPROVISIONING EXPIRED FAILED
}
+Standard {
  size integer
  capacityUnits enum CAPACITY_UNITS_UNSPECIFIED CORES CHIPS
  resourceType string
  interval Interval
  usage Usage
}
+Usage {
  total int64
}
ResetQueuedResourceRequest {
}
RuntimeVersion {
  name string
  version string
}
SchedulingConfig {
  preemptible boolean
  reserved boolean
  spot boolean
}
ServiceAccount {
  email string
  scope array string
}
ServiceIdentity {
  email string
}
ShieldedInstanceConfig {
  enableSecureBoot boolean
}
+SimulateMaintenanceEventRequest {
  workerIds array string
}
Spot {
}
StartNodeRequest {
}
Status {
  code integer
  message string
  details array map any
}
StopNodeRequest {
}
Symptom {
  createTime string
  symptomType enum SYMPTOM_TYPE_UNSPECIFIED LOW_MEMORY OUT_OF_MEMORY EXECUTE_TIMED_OUT MESH_BUILD_FAIL HBM_OUT_OF_MEMORY PROJECT_ABUSE
  details string
  workerId string
}
Tpu {
  nodeSpec array NodeSpec
}
+UpcomingMaintenance {
  type enum UNKNOWN_TYPE SCHEDULED UNSCHEDULED
  canReschedule boolean
  windowStartTime string
  windowEndTime string
  latestWindowStartTime string
  maintenanceStatus enum UNKNOWN PENDING ONGOING
}
)";
}

}  // namespace tpuemu::api
