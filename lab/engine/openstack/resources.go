// Package openstack maps terraform-provider-openstack v3.4.0 (Go module .../terraform-provider-openstack/v3) onto the
// Pulumi package "openstack" through pulumi-terraform-bridge v3.120.0, serving the tokens, names, defaults and schema
// of the Python SDK pulumi-openstack==5.5.3 (the release users install; Pulumi's own 5.4-5.5 plugins wrap the same
// Terraform provider release). This is ha-endpoint's own bridge build of those inputs, not Pulumi's release binary
// (its module is not served by the module proxy here; see engine/README.md and README.md beside this file).
//
// The tokens below are the ones the pulumi-openstack 5.5.3 wheel registers (resource_modules of its __init__.py) and
// invokes (pulumi.runtime.invoke), one per Terraform resource / data source of v3.4.0 (108 + 61), plus the legacy
// tokens the wheel still carries as deprecated aliases (renames). Property names are the bridge's default
// snake_case -> camelCase with the overrides in fieldOverrides. engine/openstack/check_sdk.py compares the generated
// schema with the wheel for every resource and function and fails on any difference not listed there with a reason.
package openstack

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	shimv2 "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfshim/sdk-v2"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	tfos "github.com/terraform-provider-openstack/terraform-provider-openstack/v3/openstack"
)

// Version is the plugin version, set at build time:
// -ldflags "-X github.com/ha-endpoint/engine/openstack.Version=5.5.3".
var Version = "0.0.0-dev"

// resourceTokens: Terraform resource type -> Pulumi resource type token (pulumi-openstack 5.5.3).
var resourceTokens = map[string]string{
	"openstack_bgpvpn_network_associate_v2":              "openstack:bgpvpn/networkAssociateV2:NetworkAssociateV2",
	"openstack_bgpvpn_port_associate_v2":                 "openstack:bgpvpn/portAssociateV2:PortAssociateV2",
	"openstack_bgpvpn_router_associate_v2":               "openstack:bgpvpn/routerAssociateV2:RouterAssociateV2",
	"openstack_bgpvpn_v2":                                "openstack:bgpvpn/v2:V2",
	"openstack_blockstorage_qos_association_v3":          "openstack:blockstorage/qosAssociationV3:QosAssociationV3",
	"openstack_blockstorage_qos_v3":                      "openstack:blockstorage/qosV3:QosV3",
	"openstack_blockstorage_quotaset_v3":                 "openstack:blockstorage/quoteSetV3:QuoteSetV3",
	"openstack_blockstorage_volume_attach_v3":            "openstack:blockstorage/volumeAttach:VolumeAttach",
	"openstack_blockstorage_volume_type_access_v3":       "openstack:blockstorage/volumeTypeAccessV3:VolumeTypeAccessV3",
	"openstack_blockstorage_volume_type_v3":              "openstack:blockstorage/volumeTypeV3:VolumeTypeV3",
	"openstack_blockstorage_volume_v3":                   "openstack:blockstorage/volume:Volume",
	"openstack_compute_aggregate_v2":                     "openstack:compute/aggregateV2:AggregateV2",
	"openstack_compute_flavor_access_v2":                 "openstack:compute/flavorAccess:FlavorAccess",
	"openstack_compute_flavor_v2":                        "openstack:compute/flavor:Flavor",
	"openstack_compute_instance_v2":                      "openstack:compute/instance:Instance",
	"openstack_compute_interface_attach_v2":              "openstack:compute/interfaceAttach:InterfaceAttach",
	"openstack_compute_keypair_v2":                       "openstack:compute/keypair:Keypair",
	"openstack_compute_quotaset_v2":                      "openstack:compute/quotaSetV2:QuotaSetV2",
	"openstack_compute_servergroup_v2":                   "openstack:compute/serverGroup:ServerGroup",
	"openstack_compute_volume_attach_v2":                 "openstack:compute/volumeAttach:VolumeAttach",
	"openstack_containerinfra_cluster_v1":                "openstack:containerinfra/cluster:Cluster",
	"openstack_containerinfra_clustertemplate_v1":        "openstack:containerinfra/clusterTemplate:ClusterTemplate",
	"openstack_containerinfra_nodegroup_v1":              "openstack:containerinfra/nodeGroup:NodeGroup",
	"openstack_db_configuration_v1":                      "openstack:database/configuration:Configuration",
	"openstack_db_database_v1":                           "openstack:database/database:Database",
	"openstack_db_instance_v1":                           "openstack:database/instance:Instance",
	"openstack_db_user_v1":                               "openstack:database/user:User",
	"openstack_dns_quota_v2":                             "openstack:dns/quotaV2:QuotaV2",
	"openstack_dns_recordset_v2":                         "openstack:dns/recordSet:RecordSet",
	"openstack_dns_transfer_accept_v2":                   "openstack:dns/transferAccept:TransferAccept",
	"openstack_dns_transfer_request_v2":                  "openstack:dns/transferRequest:TransferRequest",
	"openstack_dns_zone_share_v2":                        "openstack:dns/zoneShareV2:ZoneShareV2",
	"openstack_dns_zone_v2":                              "openstack:dns/zone:Zone",
	"openstack_fw_group_v2":                              "openstack:firewall/groupV2:GroupV2",
	"openstack_fw_policy_v2":                             "openstack:firewall/policyV2:PolicyV2",
	"openstack_fw_rule_v2":                               "openstack:firewall/ruleV2:RuleV2",
	"openstack_identity_application_credential_v3":       "openstack:identity/applicationCredential:ApplicationCredential",
	"openstack_identity_ec2_credential_v3":               "openstack:identity/ec2CredentialV3:Ec2CredentialV3",
	"openstack_identity_endpoint_v3":                     "openstack:identity/endpointV3:EndpointV3",
	"openstack_identity_group_v3":                        "openstack:identity/groupV3:GroupV3",
	"openstack_identity_inherit_role_assignment_v3":      "openstack:identity/inheritRoleAssignment:InheritRoleAssignment",
	"openstack_identity_limit_v3":                        "openstack:identity/limitV3:LimitV3",
	"openstack_identity_project_v3":                      "openstack:identity/project:Project",
	"openstack_identity_registered_limit_v3":             "openstack:identity/registeredLimitV3:RegisteredLimitV3",
	"openstack_identity_role_assignment_v3":              "openstack:identity/roleAssignment:RoleAssignment",
	"openstack_identity_role_v3":                         "openstack:identity/role:Role",
	"openstack_identity_service_v3":                      "openstack:identity/serviceV3:ServiceV3",
	"openstack_identity_user_membership_v3":              "openstack:identity/userMembershipV3:UserMembershipV3",
	"openstack_identity_user_v3":                         "openstack:identity/user:User",
	"openstack_images_image_access_accept_v2":            "openstack:images/imageAccessAccept:ImageAccessAccept",
	"openstack_images_image_access_v2":                   "openstack:images/imageAccess:ImageAccess",
	"openstack_images_image_v2":                          "openstack:images/image:Image",
	"openstack_keymanager_container_v1":                  "openstack:keymanager/containerV1:ContainerV1",
	"openstack_keymanager_order_v1":                      "openstack:keymanager/orderV1:OrderV1",
	"openstack_keymanager_secret_v1":                     "openstack:keymanager/secretV1:SecretV1",
	"openstack_lb_flavor_v2":                             "openstack:loadbalancer/flavorV2:FlavorV2",
	"openstack_lb_flavorprofile_v2":                      "openstack:loadbalancer/flavorprofileV2:FlavorprofileV2",
	"openstack_lb_l7policy_v2":                           "openstack:loadbalancer/l7PolicyV2:L7PolicyV2",
	"openstack_lb_l7rule_v2":                             "openstack:loadbalancer/l7RuleV2:L7RuleV2",
	"openstack_lb_listener_v2":                           "openstack:loadbalancer/listener:Listener",
	"openstack_lb_loadbalancer_v2":                       "openstack:loadbalancer/loadBalancer:LoadBalancer",
	"openstack_lb_member_v2":                             "openstack:loadbalancer/member:Member",
	"openstack_lb_members_v2":                            "openstack:loadbalancer/members:Members",
	"openstack_lb_monitor_v2":                            "openstack:loadbalancer/monitor:Monitor",
	"openstack_lb_pool_v2":                               "openstack:loadbalancer/pool:Pool",
	"openstack_lb_quota_v2":                              "openstack:loadbalancer/quota:Quota",
	"openstack_networking_address_group_v2":              "openstack:networking/addressGroupV2:AddressGroupV2",
	"openstack_networking_addressscope_v2":               "openstack:networking/addressScope:AddressScope",
	"openstack_networking_bgp_peer_v2":                   "openstack:networking/bgpPeerV2:BgpPeerV2",
	"openstack_networking_bgp_speaker_v2":                "openstack:networking/bgpSpeakerV2:BgpSpeakerV2",
	"openstack_networking_floatingip_associate_v2":       "openstack:networking/floatingIpAssociate:FloatingIpAssociate",
	"openstack_networking_floatingip_v2":                 "openstack:networking/floatingIp:FloatingIp",
	"openstack_networking_network_v2":                    "openstack:networking/network:Network",
	"openstack_networking_port_secgroup_associate_v2":    "openstack:networking/portSecGroupAssociate:PortSecGroupAssociate",
	"openstack_networking_port_v2":                       "openstack:networking/port:Port",
	"openstack_networking_portforwarding_v2":             "openstack:networking/portForwardingV2:PortForwardingV2",
	"openstack_networking_qos_bandwidth_limit_rule_v2":   "openstack:networking/qosBandwidthLimitRule:QosBandwidthLimitRule",
	"openstack_networking_qos_dscp_marking_rule_v2":      "openstack:networking/qosDscpMarkingRule:QosDscpMarkingRule",
	"openstack_networking_qos_minimum_bandwidth_rule_v2": "openstack:networking/qosMinimumBandwidthRule:QosMinimumBandwidthRule",
	"openstack_networking_qos_policy_v2":                 "openstack:networking/qosPolicy:QosPolicy",
	"openstack_networking_quota_v2":                      "openstack:networking/quotaV2:QuotaV2",
	"openstack_networking_rbac_policy_v2":                "openstack:networking/rbacPolicyV2:RbacPolicyV2",
	"openstack_networking_router_interface_v2":           "openstack:networking/routerInterface:RouterInterface",
	"openstack_networking_router_route_v2":               "openstack:networking/routerRoute:RouterRoute",
	"openstack_networking_router_routes_v2":              "openstack:networking/routerRoutesV2:RouterRoutesV2",
	"openstack_networking_router_v2":                     "openstack:networking/router:Router",
	"openstack_networking_secgroup_rule_v2":              "openstack:networking/secGroupRule:SecGroupRule",
	"openstack_networking_secgroup_v2":                   "openstack:networking/secGroup:SecGroup",
	"openstack_networking_segment_v2":                    "openstack:networking/segmentV2:SegmentV2",
	"openstack_networking_subnet_route_v2":               "openstack:networking/subnetRoute:SubnetRoute",
	"openstack_networking_subnet_v2":                     "openstack:networking/subnet:Subnet",
	"openstack_networking_subnetpool_v2":                 "openstack:networking/subnetPool:SubnetPool",
	"openstack_networking_trunk_v2":                      "openstack:networking/trunk:Trunk",
	"openstack_objectstorage_account_v1":                 "openstack:objectstorage/accountV1:AccountV1",
	"openstack_objectstorage_container_v1":               "openstack:objectstorage/container:Container",
	"openstack_objectstorage_object_v1":                  "openstack:objectstorage/containerObject:ContainerObject",
	"openstack_objectstorage_tempurl_v1":                 "openstack:objectstorage/tempUrl:TempUrl",
	"openstack_orchestration_stack_v1":                   "openstack:orchestration/stackV1:StackV1",
	"openstack_sharedfilesystem_securityservice_v2":      "openstack:sharedfilesystem/securityService:SecurityService",
	"openstack_sharedfilesystem_share_access_v2":         "openstack:sharedfilesystem/shareAccess:ShareAccess",
	"openstack_sharedfilesystem_share_v2":                "openstack:sharedfilesystem/share:Share",
	"openstack_sharedfilesystem_sharenetwork_v2":         "openstack:sharedfilesystem/shareNetwork:ShareNetwork",
	"openstack_taas_tap_mirror_v2":                       "openstack:index/taasTapMirrorV2:TaasTapMirrorV2",
	"openstack_vpnaas_endpoint_group_v2":                 "openstack:vpnaas/endpointGroup:EndpointGroup",
	"openstack_vpnaas_ike_policy_v2":                     "openstack:vpnaas/ikePolicy:IkePolicy",
	"openstack_vpnaas_ipsec_policy_v2":                   "openstack:vpnaas/ipSecPolicy:IpSecPolicy",
	"openstack_vpnaas_service_v2":                        "openstack:vpnaas/service:Service",
	"openstack_vpnaas_site_connection_v2":                "openstack:vpnaas/siteConnection:SiteConnection",
}

// dataSourceTokens: Terraform data source -> Pulumi function token (pulumi-openstack 5.5.3).
var dataSourceTokens = map[string]string{
	"openstack_blockstorage_availability_zones_v3":       "openstack:blockstorage/getAvailabilityZonesV3:getAvailabilityZonesV3",
	"openstack_blockstorage_quotaset_v3":                 "openstack:blockstorage/getQuotasetV3:getQuotasetV3",
	"openstack_blockstorage_snapshot_v3":                 "openstack:blockstorage/getSnapshotV3:getSnapshotV3",
	"openstack_blockstorage_volume_v3":                   "openstack:blockstorage/getVolumeV3:getVolumeV3",
	"openstack_compute_aggregate_v2":                     "openstack:compute/getAggregateV2:getAggregateV2",
	"openstack_compute_availability_zones_v2":            "openstack:compute/getAvailabilityZones:getAvailabilityZones",
	"openstack_compute_flavor_v2":                        "openstack:compute/getFlavor:getFlavor",
	"openstack_compute_hypervisor_v2":                    "openstack:compute/getHypervisorV2:getHypervisorV2",
	"openstack_compute_instance_v2":                      "openstack:compute/getInstanceV2:getInstanceV2",
	"openstack_compute_keypair_v2":                       "openstack:compute/getKeypair:getKeypair",
	"openstack_compute_limits_v2":                        "openstack:compute/getLimitsV2:getLimitsV2",
	"openstack_compute_quotaset_v2":                      "openstack:compute/getQuotaSetV2:getQuotaSetV2",
	"openstack_compute_servergroup_v2":                   "openstack:compute/getServergroupV2:getServergroupV2",
	"openstack_containerinfra_cluster_v1":                "openstack:containerinfra/getCluster:getCluster",
	"openstack_containerinfra_clustertemplate_v1":        "openstack:containerinfra/getClusterTemplate:getClusterTemplate",
	"openstack_containerinfra_nodegroup_v1":              "openstack:containerinfra/getNodeGroup:getNodeGroup",
	"openstack_dns_zone_share_v2":                        "openstack:dns/getZoneShareV2:getZoneShareV2",
	"openstack_dns_zone_v2":                              "openstack:dns/getDnsZone:getDnsZone",
	"openstack_fw_group_v2":                              "openstack:firewall/getGroupV2:getGroupV2",
	"openstack_fw_policy_v2":                             "openstack:firewall/getPolicyV2:getPolicyV2",
	"openstack_fw_rule_v2":                               "openstack:firewall/getRuleV2:getRuleV2",
	"openstack_identity_auth_scope_v3":                   "openstack:identity/getAuthScope:getAuthScope",
	"openstack_identity_endpoint_v3":                     "openstack:identity/getEndpoint:getEndpoint",
	"openstack_identity_group_v3":                        "openstack:identity/getGroup:getGroup",
	"openstack_identity_project_ids_v3":                  "openstack:identity/getProjectIdsV3:getProjectIdsV3",
	"openstack_identity_project_v3":                      "openstack:identity/getProject:getProject",
	"openstack_identity_role_v3":                         "openstack:identity/getRole:getRole",
	"openstack_identity_service_v3":                      "openstack:identity/getService:getService",
	"openstack_identity_user_v3":                         "openstack:identity/getUser:getUser",
	"openstack_images_image_ids_v2":                      "openstack:images/getImageIds:getImageIds",
	"openstack_images_image_v2":                          "openstack:images/getImage:getImage",
	"openstack_keymanager_container_v1":                  "openstack:keymanager/getContainer:getContainer",
	"openstack_keymanager_secret_v1":                     "openstack:keymanager/getSecret:getSecret",
	"openstack_lb_flavor_v2":                             "openstack:loadbalancer/getFlavorV2:getFlavorV2",
	"openstack_lb_flavorprofile_v2":                      "openstack:loadbalancer/getFlavorprofileV2:getFlavorprofileV2",
	"openstack_lb_listener_v2":                           "openstack:loadbalancer/getListenerV2:getListenerV2",
	"openstack_lb_loadbalancer_v2":                       "openstack:loadbalancer/getLoadbalancerV2:getLoadbalancerV2",
	"openstack_lb_pool_v2":                               "openstack:loadbalancer/getPoolV2:getPoolV2",
	"openstack_loadbalancer_flavor_v2":                   "openstack:loadbalancer/getLbFlavorDeprecated:getLbFlavorDeprecated",
	"openstack_networking_addressscope_v2":               "openstack:networking/getAddressScope:getAddressScope",
	"openstack_networking_floatingip_v2":                 "openstack:networking/getFloatingIp:getFloatingIp",
	"openstack_networking_network_v2":                    "openstack:networking/getNetwork:getNetwork",
	"openstack_networking_port_ids_v2":                   "openstack:networking/getPortIds:getPortIds",
	"openstack_networking_port_v2":                       "openstack:networking/getPort:getPort",
	"openstack_networking_qos_bandwidth_limit_rule_v2":   "openstack:networking/getQosBandwidthLimitRule:getQosBandwidthLimitRule",
	"openstack_networking_qos_dscp_marking_rule_v2":      "openstack:networking/getQosDscpMarkingRule:getQosDscpMarkingRule",
	"openstack_networking_qos_minimum_bandwidth_rule_v2": "openstack:networking/getQosMinimumBandwidthRule:getQosMinimumBandwidthRule",
	"openstack_networking_qos_policy_v2":                 "openstack:networking/getQosPolicy:getQosPolicy",
	"openstack_networking_quota_v2":                      "openstack:networking/getQuotaV2:getQuotaV2",
	"openstack_networking_router_v2":                     "openstack:networking/getRouter:getRouter",
	"openstack_networking_secgroup_v2":                   "openstack:networking/getSecGroup:getSecGroup",
	"openstack_networking_segment_v2":                    "openstack:networking/getSegmentV2:getSegmentV2",
	"openstack_networking_subnet_ids_v2":                 "openstack:networking/getSubnetIdsV2:getSubnetIdsV2",
	"openstack_networking_subnet_v2":                     "openstack:networking/getSubnet:getSubnet",
	"openstack_networking_subnetpool_v2":                 "openstack:networking/getSubnetPool:getSubnetPool",
	"openstack_networking_trunk_v2":                      "openstack:networking/getTrunk:getTrunk",
	"openstack_sharedfilesystem_availability_zones_v2":   "openstack:sharedfilesystem/getAvailbilityZones:getAvailbilityZones",
	"openstack_sharedfilesystem_share_v2":                "openstack:sharedfilesystem/getShare:getShare",
	"openstack_sharedfilesystem_sharenetwork_v2":         "openstack:sharedfilesystem/getShareNetwork:getShareNetwork",
	"openstack_sharedfilesystem_snapshot_v2":             "openstack:sharedfilesystem/getSnapshot:getSnapshot",
	"openstack_workflow_workflow_v2":                     "openstack:index/getWorkflowWorkflowV2:getWorkflowWorkflowV2",
}

// legacyResources: Terraform resource type -> the older token the 5.5.3 wheel still registers for it (an earlier
// release mapped it there). The legacy token is a deprecated copy of the resource, and the current one carries an
// alias to it, so a stack created under the old token moves without replacement.
var legacyResources = map[string]string{
	"openstack_bgpvpn_network_associate_v2": "openstack:index/bgpvpnNetworkAssociateV2:BgpvpnNetworkAssociateV2",
	"openstack_bgpvpn_port_associate_v2":    "openstack:index/bgpvpnPortAssociateV2:BgpvpnPortAssociateV2",
	"openstack_bgpvpn_router_associate_v2":  "openstack:index/bgpvpnRouterAssociateV2:BgpvpnRouterAssociateV2",
	"openstack_bgpvpn_v2":                   "openstack:index/bgpvpnV2:BgpvpnV2",
	"openstack_lb_flavorprofile_v2":         "openstack:index/lbFlavorprofileV2:LbFlavorprofileV2",
	"openstack_lb_loadbalancer_v2":          "openstack:index/lbLoadbalancerV2:LbLoadbalancerV2",
}

// legacyDataSources: Terraform data source -> the older function token the 5.5.3 wheel still exports (deprecated).
var legacyDataSources = map[string]string{
	"openstack_fw_group_v2":          "openstack:index/getFwGroupV2:getFwGroupV2",
	"openstack_fw_policy_v2":         "openstack:index/getFwPolicyV2:getFwPolicyV2",
	"openstack_fw_rule_v2":           "openstack:index/getFwRuleV2:getFwRuleV2",
	"openstack_workflow_workflow_v2": "openstack:index/workflowWorkflowV2:WorkflowWorkflowV2",
}

// fieldOverrides: where the Python SDK 5.5.3 does not use the bridge's default name for a Terraform attribute.
var fieldOverrides = map[string]map[string]*tfbridge.SchemaInfo{
	// The SDK calls Terraform's allocation_pool (a list) allocationPools (nested type SubnetAllocationPool).
	"openstack_networking_subnet_v2": {
		"allocation_pool": {Name: "allocationPools"},
	},
	// "outputs" would clash with the resource's own outputs in the SDKs: StackOutputs (type StackV1StackOutput).
	"openstack_orchestration_stack_v1": {
		"outputs": {Name: "StackOutputs"},
	},
}

// envConfig: provider configuration keys whose default the Python SDK reads from the environment (its
// config/vars.py); the Terraform provider itself also reads every OS_* variable and clouds.yaml.
var envConfig = map[string][]string{
	"allow_reauth":  {"OS_ALLOW_REAUTH"},
	"cloud":         {"OS_CLOUD"},
	"delayed_auth":  {"OS_DELAYED_AUTH"},
	"endpoint_type": {"OS_ENDPOINT_TYPE"},
	"insecure":      {"OS_INSECURE"},
	"region":        {"OS_REGION_NAME"},
	"swauth":        {"OS_SWAUTH"},
}

// Provider returns the bridge's description of the provider. It panics if a Terraform resource or data source of
// the wrapped provider has no token (a provider upgrade added one): every one must be mapped deliberately.
func Provider() tfbridge.ProviderInfo {
	tfp := tfos.Provider()
	p := shimv2.NewProvider(tfp)

	resources := map[string]*tfbridge.ResourceInfo{}
	for tf, tok := range resourceTokens {
		resources[tf] = &tfbridge.ResourceInfo{Tok: tokens.Type(tok), Fields: fieldOverrides[tf]}
	}
	dataSources := map[string]*tfbridge.DataSourceInfo{}
	for tf, tok := range dataSourceTokens {
		dataSources[tf] = &tfbridge.DataSourceInfo{Tok: tokens.ModuleMember(tok)}
	}
	for tf := range fieldOverrides {
		if _, ok := resourceTokens[tf]; !ok {
			panic("engine/openstack: field overrides for unmapped resource " + tf)
		}
	}
	var missing []string
	for tf := range tfp.ResourcesMap {
		if _, ok := resources[tf]; !ok {
			missing = append(missing, "resource "+tf)
		}
	}
	for tf := range tfp.DataSourcesMap {
		if _, ok := dataSources[tf]; !ok {
			missing = append(missing, "data source "+tf)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		panic(fmt.Sprintf("engine/openstack: no Pulumi token for %v", missing))
	}

	config := map[string]*tfbridge.SchemaInfo{}
	for k, vars := range envConfig {
		config[k] = &tfbridge.SchemaInfo{Default: &tfbridge.DefaultInfo{EnvVars: vars}}
	}

	prov := tfbridge.ProviderInfo{
		P:                       p,
		Name:                    "openstack",
		Version:                 Version,
		DisplayName:             "OpenStack",
		Publisher:               "ha-endpoint (bridge build of terraform-provider-openstack)",
		Description:             "A Pulumi package for creating and managing OpenStack cloud resources.",
		Keywords:                []string{"pulumi", "openstack"},
		License:                 "Apache-2.0",
		Homepage:                "https://pulumi.io",
		Repository:              "https://github.com/pulumi/pulumi-openstack",
		GitHubOrg:               "terraform-provider-openstack",
		TFProviderModuleVersion: "v3",
		TFProviderVersion:       "3.4.0",
		Config:                  config,
		Resources:               resources,
		DataSources:             dataSources,
		Python: &tfbridge.PythonInfo{
			Requires:             map[string]string{"pulumi": ">=3.0.0,<4.0.0"},
			RespectSchemaVersion: true,
		},
	}
	for tf, legacy := range legacyResources {
		cur := tokens.Type(resourceTokens[tf])
		prov.RenameResourceWithAlias(tf, tokens.Type(legacy), cur, legacyModule(legacy), legacyModule(string(cur)),
			resources[tf])
	}
	for tf, legacy := range legacyDataSources {
		cur := tokens.ModuleMember(dataSourceTokens[tf])
		prov.RenameDataSource(tf, tokens.ModuleMember(legacy), cur, legacyModule(legacy), legacyModule(string(cur)),
			dataSources[tf])
	}
	// Auto-naming: a resource's string input "name" not given gets "<resource name>-<7 random>" (at most 255
	// characters), as pulumi-openstack does; hence "name" is optional in the schema even where Terraform requires it.
	prov.SetAutonaming(255, "-")
	return prov
}

// legacyModule is the module part of a token as the deprecation messages of the SDK name it
// ("openstack:index/bgpvpnV2:BgpvpnV2" -> "index/bgpvpnV2").
func legacyModule(tok string) string {
	parts := strings.Split(tok, ":")
	return parts[1]
}
