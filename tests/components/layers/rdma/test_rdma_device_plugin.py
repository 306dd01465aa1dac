"""The RDMA shared device plugin's configuration, read and checked as the plugin does.

Mellanox/k8s-rdma-shared-dev-plugin (the image network-operator v26.4.1 pins; hack/release.yaml
`RdmaSharedDevicePlugin`), pkg/resources/resources_manager.go: `ReadConfig` decodes the JSON with Go's encoding/json
into `UserConfigList` (pkg/types/types.go: `periodicUpdateInterval`, `configList` of `resourceName`,
`resourcePrefix`, `rdmaHcaMax`, `devices`, `selectors` {vendors, deviceIDs, drivers, ifNames, linkTypes}), then
`ValidateConfigs` refuses the whole file, and the plugin exits, when a resource name has a character outside
`^[a-zA-Z0-9_]+$` (`validResourceName`), a name repeats, `rdmaHcaMax` < 0, or an entry has neither selectors nor
devices, or both. The program below decodes with Go's own encoding/json into the same shapes and applies those rules
(written here, not copied); before this test, prod's fabrics `ib-rail0`... went into `resourceName` as they are,
and the plugin would have refused them: no `rdma/*` resource, every GPU slurmd pod Pending.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from components.layers.rdma.config import RdmaConfig
from components.layers.rdma.objects import shared_device_plugin_config
from offline.program.engine import RecordedStack
from tests.helpers import go_program
from tests.test_layers import one

GO_VALIDATE = """package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
)

type Selectors struct {
	Vendors   []string `json:"vendors,omitempty"`
	DeviceIDs []string `json:"deviceIDs,omitempty"`
	Drivers   []string `json:"drivers,omitempty"`
	IfNames   []string `json:"ifNames,omitempty"`
	LinkTypes []string `json:"linkTypes,omitempty"`
}

type UserConfig struct {
	ResourceName   string    `json:"resourceName"`
	ResourcePrefix string    `json:"resourcePrefix"`
	RdmaHcaMax     int       `json:"rdmaHcaMax"`
	Devices        []string  `json:"devices"`
	Selectors      Selectors `json:"selectors"`
}

type UserConfigList struct {
	PeriodicUpdateInterval *int         `json:"periodicUpdateInterval"`
	ConfigList             []UserConfig `json:"configList"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\\n", args...)
	os.Exit(1)
}

func main() {
	raw, _ := io.ReadAll(os.Stdin)
	config := &UserConfigList{}
	if err := json.Unmarshal(raw, config); err != nil {
		fail("error unmarshal config: %v", err)
	}
	if len(config.ConfigList) < 1 {
		fail("no resources configuration found")
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9_]+$`)
	seen := map[string]bool{}
	for _, conf := range config.ConfigList {
		if !valid.MatchString(conf.ResourceName) {
			fail("error: resource name %q contains invalid characters", conf.ResourceName)
		}
		if seen[conf.ResourceName] {
			fail("error: resource name %q already exists", conf.ResourceName)
		}
		if conf.RdmaHcaMax < 0 {
			fail("error: Invalid value for rdmaHcaMax < 0: %d", conf.RdmaHcaMax)
		}
		s := conf.Selectors
		empty := len(s.Vendors) == 0 && len(s.DeviceIDs) == 0 && len(s.Drivers) == 0 && len(s.IfNames) == 0 && len(s.LinkTypes) == 0
		if empty && len(conf.Devices) == 0 {
			fail("error: configuration missmatch. neither selectors nor devices")
		}
		if !empty && len(conf.Devices) > 0 {
			fail("configuration mismatch. Cannot specify both selectors and devices")
		}
		seen[conf.ResourceName] = true
		prefix := conf.ResourcePrefix
		if prefix == "" {
			prefix = "rdma"
		}
		fmt.Printf("%s/%s %v\\n", prefix, conf.ResourceName, s.IfNames)
	}
}
"""


def validate(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    program = go_program(tmp_path, GO_VALIDATE, "rdma-validate")
    return subprocess.run([str(program)], input=config, capture_output=True, text=True, timeout=60, check=False)


def test_prod_nic_cluster_policy_config_passes_the_plugin_s_checks_and_offers_what_pods_request(
    prod_stack: RecordedStack, tmp_path: Path
) -> None:
    policy = one(prod_stack, "NicClusterPolicy", "", "nic-cluster-policy")
    result = validate(tmp_path, policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert result.returncode == 0, result.stderr
    offered = {line.split()[0] for line in result.stdout.splitlines()}
    assert offered == {"rdma/ib_rail0", "rdma/ib_rail1", "rdma/ib_rail2", "rdma/ib_rail3"}
    requested = {
        name
        for r in prod_stack.kubernetes_objects()
        if r.inputs["kind"] == "NodeSet"
        for name in r.inputs["spec"]["slurmd"]["resources"]["limits"]
        if name.startswith("rdma/")
    }
    assert requested and requested <= offered


def test_a_fabric_name_with_a_hyphen_as_it_is_would_be_refused_by_the_plugin(tmp_path: Path) -> None:
    config = RdmaConfig.model_validate(
        {
            "fabrics": [{"name": "ib-rail0", "type": "infiniband", "mtu": 4092, "range": "10.60.0.0/16"}],
            "pools": [{"pool": "gpu-h100", "nics": [{"interface": "ibp26s0", "fabric": "ib-rail0", "gpus": [0]}]}],
        }
    )
    rendered = json.loads(shared_device_plugin_config(config))
    assert [entry["resourceName"] for entry in rendered["configList"]] == ["ib_rail0"]
    assert validate(tmp_path, json.dumps(rendered)).returncode == 0
    rendered["configList"][0]["resourceName"] = "ib-rail0"  # the name as it was used before
    refused = validate(tmp_path, json.dumps(rendered))
    assert refused.returncode == 1 and 'resource name "ib-rail0" contains invalid characters' in refused.stderr
