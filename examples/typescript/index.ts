// A TypeScript stack using the HA endpoint through its component package: the SDK is generated from
// components/schema.json (`examples/typescript/typecheck.sh`, or `pulumi package add <path to components>` where the Node.js
// language host exists) and the component itself runs in its Python provider host.
import * as haendpoint from "@pulumi/haendpoint";

const azs = ["az1", "az2", "az3"];

const endpoint = new haendpoint.HaEndpoint("my-api", {
    name: "my-api", // its own name and record: it runs beside the dev stack
    floatingNetwork: "public", // names or ids, or Outputs of resources this program declares
    zones: Object.fromEntries(azs.map(az => [az, { subnet: `cp-${az}` }])),
    listeners: [{ port: 6443, monitor: { type: haendpoint.MonitorType.HTTPS, path: "/readyz" } }],
    members: azs.map((az, i) => ({ name: `cp-${i + 1}`, az, address: `10.10.${i + 1}.10` })),
    dns: { dnsZone: "example.test.", record: "my-api" },
});

// the stack program's output names (examples/stack-reference reads them)
export const fqdn = endpoint.fqdn;
export const ports = endpoint.ports;
export const addresses = endpoint.addresses;
export const vips = endpoint.zones.apply(zones => azs.map(az => zones[az].vipAddress));
