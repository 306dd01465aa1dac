package main

// The rules by which the plugins that read hpcforge's CNI configs accept them, written here (not copied) from their
// source at the versions network-operator 26.4.1 pins; each function names the file it follows. Decoding is Go's own
// encoding/json into the same shapes. tests/components/layers/rdma/test_cni_consumers.py builds and runs this program.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func readStdin() []byte {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	return raw
}

func printJSON(value any) {
	out, _ := json.Marshal(value)
	fmt.Println(string(out))
}

// --- containernetworking/cni v1.3.0 (ipoib-cni, nv-ipam, whereabouts and Multus 4.3.0 use it) -------------------
// pkg/skel/skel.go `validateConfig` and `checkVersionAndCall`, pkg/utils/utils.go `ValidateNetworkName`,
// pkg/version/version.go `All`, pkg/version/conf.go (no cniVersion reads as 0.1.0).

var networkName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$`)
var allVersions = []string{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}

func skel(raw []byte) {
	var conf struct {
		Name       string `json:"name"`
		CNIVersion string `json:"cniVersion"`
	}
	if err := json.Unmarshal(raw, &conf); err != nil {
		fail("error unmarshall network config: %v", err)
	}
	if conf.Name == "" {
		fail("missing network name")
	}
	if !networkName.MatchString(conf.Name) {
		fail("invalid characters found in network name: %s", conf.Name)
	}
	version := conf.CNIVersion
	if version == "" {
		version = "0.1.0"
	}
	for _, v := range allVersions {
		if v == version {
			return
		}
	}
	fail("incompatible CNI versions: config is %q, plugin supports %v", version, allVersions)
}

// pkg/types/types.go `NetConf` (= PluginConf)
type IPAM struct {
	Type string `json:"type,omitempty"`
}

type DNS struct {
	Nameservers []string `json:"nameservers,omitempty"`
	Domain      string   `json:"domain,omitempty"`
	Search      []string `json:"search,omitempty"`
	Options     []string `json:"options,omitempty"`
}

type NetConf struct {
	CNIVersion    string                 `json:"cniVersion,omitempty"`
	Name          string                 `json:"name,omitempty"`
	Type          string                 `json:"type,omitempty"`
	Capabilities  map[string]bool        `json:"capabilities,omitempty"`
	IPAM          IPAM                   `json:"ipam,omitempty"`
	DNS           DNS                    `json:"dns,omitempty"`
	RawPrevResult map[string]interface{} `json:"prevResult,omitempty"`
}

// --- Mellanox/ipoib-cni network-operator-v26.4.1 ----------------------------------------------------------------
// pkg/types/types.go `NetConf`, pkg/config/config.go `LoadConf`, cmd/ipoib/main.go `cmdAdd` (dhcp refused),
// pkg/ipoib/ipoib.go `CreateIpoibLink` (the master must exist on the pod's node and be an IPoIB interface).
// Argument: the node's IPoIB interfaces, comma-separated.

func ipoib(raw []byte, nodeInterfaces string) {
	skel(raw)
	n := &struct {
		NetConf
		Master string `json:"master"`
	}{}
	if err := json.Unmarshal(raw, n); err != nil {
		fail("failed to load netconf: %v", err)
	}
	if n.Master == "" {
		fail("host master interface is missing")
	}
	if n.IPAM.Type == "dhcp" {
		fail("ipam dhcp type is not supported")
	}
	found := false
	for _, name := range strings.Split(nodeInterfaces, ",") {
		found = found || name == n.Master
	}
	if !found {
		fail("failed to lookup master %q: Link not found", n.Master)
	}
	printJSON(map[string]string{"master": n.Master, "ipam": n.IPAM.Type})
}

// --- Mellanox/nvidia-k8s-ipam network-operator-v26.4.1: the CNI plugin --------------------------------------------
// cmd/nv-ipam/main.go (skel, version.All), pkg/cni/types/types.go `NetConf`, `IPAMConf`, `LoadConf`, `getPools`,
// `getPoolType` (CNI_ARGS, which the runtime sets, left out). The IPAM plugin gets the main plugin's whole stdin.

func nvIpam(raw []byte) {
	skel(raw)
	n := &struct {
		Name       string `json:"name"`
		CNIVersion string `json:"cniVersion"`
		IPAM       *struct {
			IPAM
			ForcePoolName *bool  `json:"forcePoolName,omitempty"`
			PoolName      string `json:"poolName,omitempty"`
			PoolType      string `json:"poolType,omitempty"`
		} `json:"ipam"`
		RuntimeConfig struct {
			IPs []string `json:"ips,omitempty"`
		} `json:"runtimeConfig,omitempty"`
		Args *struct {
			ArgsCNI *struct {
				IPs       []string `json:"ips"`
				PoolNames []string `json:"poolNames"`
				PoolType  string   `json:"poolType"`
			} `json:"cni"`
		} `json:"args"`
	}{}
	if err := json.Unmarshal(raw, &n); err != nil {
		fail("failed to unmarshal configurations. %v", err)
	}
	if n.IPAM == nil {
		fail("IPAM config missing 'ipam' key")
	}
	force := n.IPAM.ForcePoolName != nil && *n.IPAM.ForcePoolName
	if !force && n.IPAM.PoolName == "" {
		n.IPAM.PoolName = n.Name
	}
	for _, v := range n.RuntimeConfig.IPs {
		address, _, _ := strings.Cut(v, "/")
		if net.ParseIP(address) == nil {
			fail("static IP request contains invalid IP address")
		}
	}
	var pools []string
	if n.Args != nil && n.Args.ArgsCNI != nil && len(n.Args.ArgsCNI.PoolNames) > 0 {
		pools = n.Args.ArgsCNI.PoolNames
	} else {
		if n.IPAM.PoolName == "" {
			fail("no pool provided")
		}
		pools = strings.Split(n.IPAM.PoolName, ",")
	}
	if len(pools) > 2 {
		fail("pool field can't contain more then two entries")
	}
	for _, p := range pools {
		if p == "" {
			fail("pool field has invalid format")
		}
	}
	poolType := n.IPAM.PoolType
	if n.Args != nil && n.Args.ArgsCNI != nil && n.Args.ArgsCNI.PoolType != "" {
		poolType = n.Args.ArgsCNI.PoolType
	}
	if poolType == "" {
		poolType = "ippool"
	}
	poolType = strings.ToLower(poolType)
	if poolType != "ippool" && poolType != "cidrpool" {
		fail("unsupported poolType %s, supported values: ippool, cidrpool", poolType)
	}
	printJSON(map[string]any{"pools": pools, "poolType": poolType})
}

// --- Mellanox/sriov-network-operator network-operator-26.4.x: how a SriovNetwork's `ipam` enters the attachment --
// api/v1/helper.go `RenderNetAttDef` (`"ipam":` + strings.Join(strings.Fields(spec.ipam), "")) into
// bindata/manifests/cni-config/sriov/sriov-cni-config.yaml (cniVersion 1.0.0). Input: {"name", "type", "ipam"}.

func sriovNetwork(raw []byte) {
	var in struct {
		Name string `json:"name"`
		Type string `json:"type"`
		IPAM string `json:"ipam"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		fail("bad input: %v", err)
	}
	config := `{"cniVersion":"1.0.0","name":"` + in.Name + `","type":"` + in.Type + `","ipam":` +
		strings.Join(strings.Fields(in.IPAM), "") + `}`
	var check map[string]any
	if err := json.Unmarshal([]byte(config), &check); err != nil {
		fail("rendered NetworkAttachmentDefinition config is not JSON: %v: %s", err, config)
	}
	fmt.Println(config)
}

// --- Mellanox/nvidia-k8s-ipam network-operator-v26.4.1: the IPPool and its controller ----------------------------
// api/v1alpha1/ippool_validate.go `Validate` (name, subnet, perNodeBlockSize, gateway, nodeSelector), helpers.go
// `GetPossibleIPCount`, pkg/ipam-controller/controllers/ippool/ippool.go `Reconcile` (nodes matching the selector,
// sorted by name, one block each), pkg/ipam-controller/allocator/allocator.go `AllocateFromPool` (blocks follow
// each other from the first usable address; `allocationValid`: the block ends inside the subnet, not on the IPv4
// broadcast address). Exclusions are left out (hpcforge sets none). Input: {"name", "spec", "nodes": [{"name",
// "labels"}]}; output: the allocations and the nodes left without a block.

type requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type ipPool struct {
	Name string `json:"name"`
	Spec struct {
		Subnet           string `json:"subnet"`
		PerNodeBlockSize int    `json:"perNodeBlockSize"`
		Gateway          string `json:"gateway"`
		DefaultGateway   bool   `json:"defaultGateway"`
		NodeSelector     *struct {
			NodeSelectorTerms []struct {
				MatchExpressions []requirement `json:"matchExpressions"`
				MatchFields      []requirement `json:"matchFields"`
			} `json:"nodeSelectorTerms"`
		} `json:"nodeSelector"`
	} `json:"spec"`
	Nodes []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"nodes"`
}

func possibleIPCount(subnet *net.IPNet) *big.Int {
	ones, bits := subnet.Mask.Size()
	if ones == bits {
		return big.NewInt(1)
	}
	if ones == bits-1 {
		return big.NewInt(2)
	}
	count := new(big.Int).Exp(big.NewInt(2), big.NewInt(int64(bits-ones)), nil)
	if subnet.IP.To4() != nil {
		return count.Sub(count, big.NewInt(2))
	}
	return count.Sub(count, big.NewInt(1))
}

func matches(r requirement, labels map[string]string) bool {
	value, has := labels[r.Key]
	switch r.Operator {
	case "In", "NotIn":
		in := false
		for _, v := range r.Values {
			in = in || (has && v == value)
		}
		return in == (r.Operator == "In")
	case "Exists":
		return has
	case "DoesNotExist":
		return !has
	}
	fail("operator %q is not handled here", r.Operator)
	return false
}

func toInt(ip net.IP) *big.Int {
	if v4 := ip.To4(); v4 != nil {
		return new(big.Int).SetBytes(v4)
	}
	return new(big.Int).SetBytes(ip.To16())
}

func fromInt(value *big.Int, v4 bool) net.IP {
	size := 16
	if v4 {
		size = 4
	}
	out := make([]byte, size)
	value.FillBytes(out)
	return net.IP(out)
}

func ipPoolReconcile(raw []byte) {
	pool := &ipPool{}
	if err := json.Unmarshal(raw, pool); err != nil {
		fail("bad input: %v", err)
	}
	var problems []string
	if !networkName.MatchString(pool.Name) {
		problems = append(problems, "metadata.name: invalid IP pool name, should be compatible with CNI network name")
	}
	_, subnet, err := net.ParseCIDR(pool.Spec.Subnet)
	if err != nil {
		problems = append(problems, "spec.subnet: is invalid subnet")
	}
	block := pool.Spec.PerNodeBlockSize
	if block < 1 {
		problems = append(problems, "spec.perNodeBlockSize: must be at least 1")
	}
	if subnet != nil && block >= 1 && possibleIPCount(subnet).Cmp(big.NewInt(int64(block))) < 0 {
		problems = append(problems, "spec.perNodeBlockSize: is larger then amount of IPs available in the subnet")
	}
	if pool.Spec.Gateway != "" {
		gateway := net.ParseIP(pool.Spec.Gateway)
		if gateway == nil {
			problems = append(problems, "spec.gateway: is invalid IP address")
		} else if subnet != nil && !subnet.Contains(gateway) {
			problems = append(problems, "spec.gateway: is not part of the subnet")
		}
	} else if pool.Spec.DefaultGateway {
		problems = append(problems, "spec.defaultGateway: cannot be true if spec.gateway is not set")
	}
	if selector := pool.Spec.NodeSelector; selector != nil {
		if len(selector.NodeSelectorTerms) == 0 {
			problems = append(problems, "spec.nodeSelector.nodeSelectorTerms: must have at least one node selector term")
		}
		for _, term := range selector.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				if (r.Operator == "In" || r.Operator == "NotIn") && len(r.Values) == 0 {
					problems = append(problems, "values: must be specified when `operator` is 'In' or 'NotIn'")
				}
			}
			if len(term.MatchFields) > 0 {
				fail("matchFields are not handled here")
			}
		}
	}
	if len(problems) > 0 {
		fail("IPPool %s is invalid: %s", pool.Name, strings.Join(problems, "; "))
	}

	var selected []string
	for _, node := range pool.Nodes {
		match := pool.Spec.NodeSelector == nil
		if !match {
			for _, term := range pool.Spec.NodeSelector.NodeSelectorTerms {
				if len(term.MatchExpressions) == 0 {
					continue // an empty term selects nothing
				}
				all := true
				for _, r := range term.MatchExpressions {
					all = all && matches(r, node.Labels)
				}
				match = match || all
			}
		}
		if match {
			selected = append(selected, node.Name)
		}
	}
	sort.Strings(selected)

	v4 := subnet.IP.To4() != nil
	ones, bits := subnet.Mask.Size()
	first := toInt(subnet.IP)
	if ones < bits-1 { // the network address is used only in /31 and /32 (/127, /128)
		first.Add(first, big.NewInt(1))
	}
	last := new(big.Int).Add(toInt(subnet.IP), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-ones)), big.NewInt(1)))
	if v4 && ones < bits-1 {
		last.Sub(last, big.NewInt(1)) // a block may not end on the broadcast address
	}
	allocations := map[string]string{}
	without := []string{}
	start := first
	for _, name := range selected {
		end := new(big.Int).Add(start, big.NewInt(int64(block-1)))
		if end.Cmp(last) > 0 {
			without = append(without, name)
			continue
		}
		allocations[name] = fromInt(start, v4).String() + "-" + fromInt(end, v4).String()
		start = new(big.Int).Add(start, big.NewInt(int64(block)))
	}
	printJSON(map[string]any{"allocations": allocations, "noFreeRanges": without})
}

// --- k8snetworkplumbingwg/whereabouts v0.9.4 ----------------------------------------------------------------------
// pkg/types/types.go `IPAMConfig` (the keys hpcforge writes), pkg/config/config.go `LoadIPAMConfig` (ipam present,
// type whereabouts, `range` as CIDR or first-last/prefix, `exclude` moved into the range, `gateway` parsed; the
// kubeconfig comes from the flat file that whereabouts' DaemonSet writes and is left out), pkg/allocate/allocate.go
// `IterateForAssignment` with pkg/iphelpers (the first to the last usable address, skipping `exclude` entries, CIDRs
// or single addresses, and the addresses already reserved). Argument: how many pods to allocate for, one after another.

func whereabouts(raw []byte, count int) {
	skel(raw)
	n := &struct {
		Name       string `json:"name"`
		CNIVersion string `json:"cniVersion"`
		IPAM       *struct {
			Type       string   `json:"type"`
			Range      string   `json:"range"`
			RangeStart net.IP   `json:"range_start,omitempty"`
			RangeEnd   net.IP   `json:"range_end,omitempty"`
			OmitRanges []string `json:"exclude,omitempty"`
			GatewayStr string   `json:"gateway"`
		} `json:"ipam"`
	}{}
	if err := json.Unmarshal(raw, n); err != nil {
		fail("LoadIPAMConfig - JSON Parsing Error: %s", err)
	}
	if n.IPAM == nil {
		fail("IPAM config missing 'ipam' key")
	}
	if n.IPAM.Type != "whereabouts" {
		fail("only interested in networks whose IPAM type is 'whereabouts'. This one was: %s", n.IPAM.Type)
	}
	if n.IPAM.Range == "" {
		fail("no range: whereabouts would allocate from no network")
	}
	rangeStart := n.IPAM.RangeStart
	var subnet *net.IPNet
	var err error
	if r := strings.SplitN(n.IPAM.Range, "-", 2); len(r) == 2 {
		rangeStart = net.ParseIP(r[0])
		if rangeStart == nil {
			fail("invalid range start IP: %s", r[0])
		}
		if _, subnet, err = net.ParseCIDR(r[1]); err != nil {
			fail("invalid CIDR (do you have the 'range' parameter set for Whereabouts?) '%s': %s", r[1], err)
		}
	} else if _, subnet, err = net.ParseCIDR(n.IPAM.Range); err != nil {
		fail("invalid CIDR %s: %s", n.IPAM.Range, err)
	}
	if n.IPAM.GatewayStr != "" && net.ParseIP(n.IPAM.GatewayStr) == nil {
		fail("couldn't parse gateway IP: %s", n.IPAM.GatewayStr)
	}
	var excluded []*net.IPNet
	for _, v := range n.IPAM.OmitRanges {
		_, network, err := net.ParseCIDR(v)
		if err != nil {
			ip := net.ParseIP(v)
			if ip == nil {
				fail("could not parse exclude range, err: %q", err)
			}
			bits := 128
			if ip4 := ip.To4(); ip4 != nil {
				ip, bits = ip4, 32
			}
			network = &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}
		}
		excluded = append(excluded, network)
	}
	v4 := subnet.IP.To4() != nil
	ones, bits := subnet.Mask.Size()
	first := new(big.Int).Add(toInt(subnet.IP), big.NewInt(1))
	last := new(big.Int).Add(toInt(subnet.IP), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-ones)), big.NewInt(2)))
	if rangeStart != nil && toInt(rangeStart).Cmp(first) >= 0 && toInt(rangeStart).Cmp(last) <= 0 {
		first = toInt(rangeStart)
	}
	if n.IPAM.RangeEnd != nil && toInt(n.IPAM.RangeEnd).Cmp(first) >= 0 && toInt(n.IPAM.RangeEnd).Cmp(last) <= 0 {
		last = toInt(n.IPAM.RangeEnd)
	}
	reserved := map[string]bool{}
	allocated := []string{}
	for pod := 0; pod < count; pod++ {
		found := ""
		for ip := new(big.Int).Set(first); ip.Cmp(last) <= 0; ip.Add(ip, big.NewInt(1)) {
			address := fromInt(ip, v4)
			if reserved[address.String()] {
				continue
			}
			skipped := false
			for _, network := range excluded {
				if network.Contains(address) {
					broadcast := make(net.IP, len(network.IP))
					for k := range network.IP {
						broadcast[k] = network.IP[k] | ^network.Mask[k]
					}
					ip.Set(toInt(broadcast))
					skipped = true
					break
				}
			}
			if skipped {
				continue
			}
			found = address.String()
			break
		}
		if found == "" {
			break // "Could not allocate IP in range"
		}
		reserved[found] = true
		allocated = append(allocated, found)
	}
	printJSON(map[string]any{"gateway": n.IPAM.GatewayStr, "allocated": allocated})
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: cni-rules ipoib IFACES | nv-ipam | sriov-network | ippool | whereabouts COUNT")
	}
	raw := readStdin()
	switch os.Args[1] {
	case "ipoib":
		ipoib(raw, os.Args[2])
	case "nv-ipam":
		nvIpam(raw)
	case "sriov-network":
		sriovNetwork(raw)
	case "ippool":
		ipPoolReconcile(raw)
	case "whereabouts":
		count, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fail("count: %v", err)
		}
		whereabouts(raw, count)
	default:
		fail("unknown rules %q", os.Args[1])
	}
}
