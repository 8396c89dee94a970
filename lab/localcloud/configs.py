"""Write the configuration of every service under the state directory (system python)."""
import base64
import json
import os
import subprocess
from pathlib import Path

from .dataplane import config as dataplane
from .settings import (COMPUTE_HOSTS, DB_ADMIN, HOST, PORT_OFFSET, PORTS, REGION, SERVICE_PROJECT, SERVICE_USER,
                       Paths, url)


def _ini(sections: dict) -> str:
    out = []
    for name, opts in sections.items():
        out.append(f'[{name}]')
        for key, value in opts.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            out.append(f'{key} = {value}')
        out.append('')
    return '\n'.join(out)


def _write(path: Path, text: str, mode: int = 0o600) -> None:
    """Write path atomically; the same text is not written again, so a file's mtime says when its content last
    changed (``Up.ensure`` restarts a service whose configuration is newer than its process)."""
    if path.exists() and path.read_text() == text and (path.stat().st_mode & 0o777) == mode:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + '.tmp')
    tmp.write_text(text)
    os.chmod(tmp, mode)
    tmp.rename(path)


def db_url(s: dict, db: str) -> str:
    return f'mysql+pymysql://localcloud:{s["db"]}@{HOST}:{PORTS["mariadb"]}/{db}?charset=utf8'


def transport_url(s: dict) -> str:
    return f'rabbit://localcloud:{s["rabbit"]}@{HOST}:{PORTS["rabbitmq"]}/'


def _authtoken(s: dict) -> dict:
    """The service user's keystoneauth options (a service calling another one reuses them: _service_auth)."""
    return {
        'www_authenticate_uri': url('keystone'),
        'auth_url': url('keystone'),
        'auth_type': 'password',
        'username': SERVICE_USER,
        'password': s['service'],
        'project_name': SERVICE_PROJECT,
        'user_domain_name': 'Default',
        'project_domain_name': 'Default',
        'region_name': REGION,
        'token_cache_time': 600,
    }


def _authtoken_of(s: dict, service_type: str) -> dict:
    """[keystone_authtoken] of a service API: with its catalog ``service_type``, without which keystonemiddleware
    refuses every token of an application credential with access rules instead of checking its rules
    (keystonemiddleware.auth_token.BaseAuthProtocol.validate_allowed_request: "Set service_type in
    [keystone_authtoken] to allow access rule validation"); the agents' scoped credentials need it (docs/security.md)."""
    return _authtoken(s) | {'service_type': service_type}


POLICY = {'enforce_new_defaults': False, 'enforce_scope': False}


def mariadb(p: Paths) -> None:
    (p.lib / 'mysql-tmp').mkdir(parents=True, exist_ok=True)
    _write(p.conf('my.cnf'), f"""[client]
socket = {p.mysql_sock}

[mysqld]
user = {DB_ADMIN}
datadir = {p.mysql_data}
socket = {p.mysql_sock}
pid-file = {p.run}/mysqld.own.pid
tmpdir = {p.lib}/mysql-tmp
bind-address = {HOST}
port = {PORTS['mariadb']}
skip-name-resolve
log-error = {p.log('mariadb')}
character-set-server = utf8mb3
collation-server = utf8mb3_general_ci
max_connections = 1000
performance_schema = OFF
skip-log-bin
innodb_buffer_pool_size = 128M
innodb_log_file_size = 64M
innodb_flush_log_at_trx_commit = 0
innodb_doublewrite = 0
innodb_flush_method = O_DIRECT_NO_FSYNC
sync_binlog = 0
""", 0o644)


def rabbitmq(p: Paths, s: dict) -> None:
    p.rabbit_home.mkdir(parents=True, exist_ok=True)
    _write(p.conf('rabbitmq.conf'), f"""listeners.tcp.default = {HOST}:{PORTS['rabbitmq']}
loopback_users = none
default_user = localcloud
default_pass = {s['rabbit']}
default_vhost = /
log.file.level = warning
vm_memory_high_watermark.absolute = 512MB
disk_free_limit.absolute = 50MB
""")
    _write(p.conf('rabbitmq-plugins'), '[].\n')


def rabbitmq_env(p: Paths) -> dict:
    return {
        'HOME': str(p.rabbit_home),
        'RABBITMQ_NODENAME': f'localcloud{PORT_OFFSET or ""}@localhost',
        'RABBITMQ_NODE_IP_ADDRESS': HOST,
        'RABBITMQ_NODE_PORT': str(PORTS['rabbitmq']),
        'RABBITMQ_DIST_PORT': str(PORTS['rabbitmq-dist']),
        'RABBITMQ_CONFIG_FILE': str(p.conf('rabbitmq.conf')),
        'RABBITMQ_ENABLED_PLUGINS_FILE': str(p.conf('rabbitmq-plugins')),
        'RABBITMQ_MNESIA_BASE': str(p.rabbit_home / 'mnesia'),
        'RABBITMQ_LOG_BASE': str(p.logs),
        'RABBITMQ_LOGS': str(p.log('rabbitmq')),
        'RABBITMQ_PID_FILE': str(p.run / 'rabbitmq.own.pid'),
        # no scheduler busy-waiting (the Erlang VM spins its schedulers before they sleep): three clouds share two
        # cores with every other service
        'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS': '-kernel inet_dist_use_interface {127,0,0,1} '
                                               '+sbwt none +sbwtdcpu none +sbwtdio none',
        'RABBITMQ_CTL_ERL_ARGS': '-kernel inet_dist_use_interface {127,0,0,1}',
        'ERL_EPMD_ADDRESS': HOST,
        'ERL_EPMD_PORT': str(PORTS['epmd']),
        'RABBITMQ_USE_LONGNAME': 'false',
    }


def keystone(p: Paths, s: dict) -> None:
    kdir = p.lib / 'keystone'
    for repo in ('fernet-keys', 'fernet-receipts', 'credential-keys'):
        _fernet_repo(kdir / repo)
    _write(p.conf('keystone.conf'), _ini({
        'DEFAULT': {'log_file': p.log('keystone'), 'max_token_size': 255},
        'database': {'connection': db_url(s, 'keystone')},
        'token': {'provider': 'fernet', 'expiration': 43200},
        'fernet_tokens': {'key_repository': kdir / 'fernet-keys'},
        'fernet_receipts': {'key_repository': kdir / 'fernet-receipts'},
        # not cached: Keystone's credential manager decrypts the cached dict in place (dogpile's memory backend hands
        # out the same object), so every EC2 check after the first failed with KeyError 'encrypted_blob' (S3 API: 500)
        'credential': {'key_repository': kdir / 'credential-keys', 'caching': False},
        'identity': {'password_hash_rounds': 4},
        'cache': {'enabled': True, 'backend': 'dogpile.cache.memory'},
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
    }))


def _fernet_repo(d: Path) -> None:
    """What keystone-manage fernet_setup/credential_setup write (keys 0 and 1), without its 10 s start-up."""
    if (d / '0').exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    for n in ('0', '1'):
        _write(d / n, base64.urlsafe_b64encode(os.urandom(32)).decode())


def neutron(p: Paths, s: dict) -> None:
    ndir = p.lib / 'neutron'
    ndir.mkdir(parents=True, exist_ok=True)
    _write(p.conf('neutron.conf'), _ini({
        'DEFAULT': {
            'log_file': p.log('neutron-server'),
            'bind_host': HOST, 'bind_port': PORTS['neutron'],
            'state_path': ndir,
            'core_plugin': 'ml2', 'service_plugins': neutron_service_plugins(p),
            'auth_strategy': 'keystone',
            'transport_url': transport_url(s),
            'api_workers': 1, 'rpc_workers': 0, 'rpc_state_report_workers': 0,
            'allow_overlapping_ips': True,
            'notify_nova_on_port_status_changes': False,
            'notify_nova_on_port_data_changes': False,
            'dhcp_agents_per_network': 1,
            'graceful_shutdown_timeout': 2,
            'api_paste_config': '/etc/neutron/api-paste.ini',
            'default_availability_zones': '',
            # No DHCP agent runs (the seed's az1..az3 rows only make the AZs valid, and ML2/OVN serves no DHCP here):
            # the periodic rescheduling of networks off dead DHCP agents (every agent_down_time / 2) only found the
            # seed's rows dead and logged "No DHCP agents available, skipping rescheduling". Off.
            'allow_automatic_dhcp_failover': False,
        },
        'database': {'connection': db_url(s, 'neutron')},
        'keystone_authtoken': _authtoken_of(s, 'network'),
        'oslo_concurrency': {'lock_path': ndir / 'lock'},
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
        'agent': {'report_interval': 0},
        # A test cloud: every project unlimited (the defaults, e.g. 10 security groups, were met by tests running side
        # by side with the seeded nodes' group and the OVN provider's health-check ports)
        'quotas': {f'quota_{resource}': -1 for resource in (
            'network', 'subnet', 'port', 'router', 'floatingip', 'security_group', 'security_group_rule')},
    }))
    ml2 = ml2_ovn() if dataplane.enabled(p) else ml2_localcloud()
    if without_address_pairs(p).exists():  # the lab fault (lab/localcloud/fault neutron-without-address-pairs)
        ml2['ml2']['mechanism_drivers'] += ',without-address-pairs'
    _write(p.conf('ml2.ini'), _ini(ml2))


def without_address_pairs(p: Paths) -> Path:
    """The marker of the lab fault "a cloud without allowed-address-pairs": while it exists, `up` writes ml2.ini with
    localcloud_neutron_plugin's WithoutAddressPairsDriver, and restarts neutron-server as for any changed file."""
    return p.root / 'fault-neutron-without-address-pairs'


def ml2_localcloud() -> dict:
    """No data plane: lab/localcloud/neutron_plugin binds every normal port (no L2 agent here), so Nova's servers get
    ports."""
    return {
        'ml2': {'type_drivers': 'flat,vxlan', 'tenant_network_types': 'vxlan',
                'mechanism_drivers': 'localcloud', 'extension_drivers': 'port_security'},
        'ml2_type_flat': {'flat_networks': 'public'},
        'ml2_type_vxlan': {'vni_ranges': '1:10000'},
        'securitygroup': {'enable_security_group': True},
    }


def ml2_ovn() -> dict:
    """The data plane (lab/localcloud/dataplane): ML2/OVN as DevStack's default. Geneve tenant networks, the flat
    `public` network on every chassis' br-ex; AZs are the chassis' `ovn-cms-options availability-zones`; no metadata
    agent, no DHCP (servers get their address from the member plumbing); gateway and floating IPs centralized on the
    router's gateway chassis."""
    return {
        'ml2': {'type_drivers': 'flat,geneve', 'tenant_network_types': 'geneve',
                'mechanism_drivers': 'ovn', 'extension_drivers': 'port_security', 'overlay_ip_version': 4},
        'ml2_type_flat': {'flat_networks': dataplane.PUBLIC_PHYSNET},
        'ml2_type_geneve': {'vni_ranges': '1:65536', 'max_header_size': 38},
        'securitygroup': {'enable_security_group': True},
        'ovn': {'ovn_nb_connection': dataplane.nb_tcp(), 'ovn_sb_connection': dataplane.sb_tcp(),
                'ovn_l3_scheduler': 'leastloaded', 'ovn_metadata_enabled': False,
                # 'log', not 'repair': the startup sync runs in the maintenance worker some 40-50 s after the API
                # serves, and in repair mode it "repairs" a port the API is creating at that moment (in Neutron's
                # database, not yet in OVN's): both write it, the API's create fails and Nova's server goes ERROR
                # (seen right after `up`: "Mechanism driver 'ovn' failed in create_port_postcommit"). The NB
                # database is kept across restarts, so there is nothing to repair; the periodic maintenance still
                # fixes what a revision number says is behind.
                'enable_distributed_floating_ip': False, 'neutron_sync_mode': 'log',
                'ovsdb_connection_timeout': 30, 'ovsdb_probe_interval': 0},
    }


def neutron_service_plugins(p: Paths) -> str:
    return 'ovn-router' if dataplane.enabled(p) else 'router'


AMPHORA_DRIVERS = 'amphora:The Octavia Amphora driver.,octavia:Deprecated alias of the Octavia Amphora driver.'


def octavia(p: Paths, s: dict) -> None:
    odir = p.lib / 'octavia'
    odir.mkdir(parents=True, exist_ok=True)
    _octavia_ca(odir, s)
    common = {
        'DEFAULT': {'transport_url': transport_url(s), 'graceful_shutdown_timeout': 2},
        'api_settings': {
            'bind_host': HOST, 'bind_port': PORTS['octavia'], 'auth_strategy': 'keystone',
            # with Octavia's own default alias `octavia` of amphora (upstream's acceptance tests ask for it by name)
            'enabled_provider_drivers': AMPHORA_DRIVERS,
            'default_provider_driver': 'amphora',
        },
        'database': {'connection': db_url(s, 'octavia')},
        'health_manager': {
            'bind_ip': HOST, 'bind_port': PORTS['octavia-health'],
            'controller_ip_port_list': f'{HOST}:{PORTS["octavia-health"]}',
            'heartbeat_key': s['heartbeat'],
            # A stopped heartbeat daemon must never cause an amphora failover.
            'heartbeat_timeout': 315360000, 'health_check_interval': 3600,
            'heartbeat_interval': 10,
            'health_update_threads': 1, 'stats_update_threads': 1, 'failover_threads': 1,
        },
        'controller_worker': {
            'workers': 1,
            'amphora_driver': 'amphora_noop_driver',
            'compute_driver': 'compute_noop_driver',
            'network_driver': 'localcloud_noop_vip_cleanup',
            'volume_driver': 'volume_noop_driver',
            'image_driver': 'image_noop_driver',
            'loadbalancer_topology': 'SINGLE',
            'amp_boot_network_list': '',
            'client_ca': odir / 'ca.pem',
        },
        'certificates': {
            'cert_generator': 'local_cert_generator',
            'ca_certificate': odir / 'ca.pem',
            'ca_private_key': odir / 'ca.key',
            'ca_private_key_passphrase': s['ca_passphrase'],
            'server_certs_key_passphrase': s['server_certs_key'],
        },
        'house_keeping': {'load_balancer_expiry_age': 60},
        'keystone_authtoken': _authtoken_of(s, 'load-balancer'),
        'service_auth': {k: v for k, v in _authtoken(s).items()
                         if k not in ('www_authenticate_uri', 'token_cache_time', 'region_name')},
        'neutron': {'region_name': REGION, 'endpoint_type': 'public'},
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
        'oslo_concurrency': {'lock_path': odir / 'lock'},
        'oslo_messaging': {'topic': 'octavia_prov'},
    }
    sockets = p.run / 'octavia'
    sockets.mkdir(parents=True, exist_ok=True)
    common['driver_agent'] = {'status_socket_path': sockets / 'status.sock', 'stats_socket_path': sockets / 'stats.sock',
                              'get_socket_path': sockets / 'get.sock'}
    if dataplane.enabled(p):
        # Octavia's OVN provider beside amphora: its LBs are OVN Load_Balancer rows; member status comes from OVN's
        # health checks (SB Service_Monitor) through the driver agent.
        common['api_settings']['enabled_provider_drivers'] = f'{AMPHORA_DRIVERS},ovn:Octavia OVN driver.'
        common['driver_agent']['enabled_provider_agents'] = 'ovn'
        common['ovn'] = {'ovn_nb_connection': dataplane.nb_tcp(), 'ovn_sb_connection': dataplane.sb_tcp(),
                         'ovsdb_probe_interval': 0}
    _write(p.conf('octavia.conf'), _ini(common))
    for svc in ('octavia-api', 'octavia-worker', 'octavia-health-manager', 'octavia-housekeeping',
                'octavia-driver-agent'):
        overlay = {'DEFAULT': {'log_file': p.log(svc)}}
        if svc == 'octavia-api':
            overlay['controller_worker'] = {'network_driver': 'allowed_address_pairs_driver'}
        _write(p.conf(f'{svc}.conf'), _ini(overlay))


def _octavia_ca(odir: Path, s: dict) -> None:
    """The worker signs amphora certificates even with noop drivers: its CA key must be encrypted."""
    key, pem = odir / 'ca.key', odir / 'ca.pem'
    if key.exists() and pem.exists():
        return
    # the passphrase by environment, never on the command line (every user can read /proc/<pid>/cmdline)
    env = {**os.environ, 'LOCALCLOUD_CA_PASSPHRASE': s['ca_passphrase']}
    subprocess.run(['openssl', 'genrsa', '-aes256', '-passout', 'env:LOCALCLOUD_CA_PASSPHRASE',
                    '-out', str(key), '2048'], check=True, capture_output=True, env=env)
    subprocess.run(['openssl', 'req', '-x509', '-new', '-key', str(key), '-passin', 'env:LOCALCLOUD_CA_PASSPHRASE',
                    '-days', '3650', '-subj', '/CN=localcloud-octavia-ca', '-out', str(pem)], check=True,
                   capture_output=True, env=env)


def designate(p: Paths, s: dict) -> None:
    from .dns import config as dns_config  # (it imports _write from here)
    ddir = p.lib / 'designate'
    ddir.mkdir(parents=True, exist_ok=True)
    mdns = f'{HOST}:{PORTS["designate-mdns"]}'
    common = {
        'DEFAULT': {'transport_url': transport_url(s), 'state_path': ddir, 'host': 'localcloud',
                    'graceful_shutdown_timeout': 2},
        'storage:sqlalchemy': {'connection': db_url(s, 'designate')},
        'service:api': {
            'listen': f'{HOST}:{PORTS["designate"]}', 'workers': 1, 'threads': 64,
            'auth_strategy': 'keystone', 'api_base_uri': url('designate') + '/',
            'enable_api_v2': True, 'enable_api_admin': True,
            'enabled_extensions_admin': 'quotas',
            'api_paste_config': '/etc/designate/api-paste.ini',
        },
        'service:central': {'workers': 1, 'managed_resource_email': 'hostmaster@example.test'},
        'service:mdns': {'listen': mdns, 'workers': 1},
        'service:worker': {'workers': 1, **dns_config.WORKER_POLLING},
        'service:producer': {'workers': 1},
        # Idle cost (make test runs up to three clouds on two cores): every Designate service reported to central
        # every 10 s (an RPC cast and a service_statuses row write: central was the cloud's second idle consumer),
        # and the producer asked central every 5 s for zones flagged delayed_notify, a flag only a pool's NS record
        # change sets (central _add_ns/_delete_ns), never a record or zone change: every 60 s and 30 s. Nothing reads
        # the service statuses but GET /v2/service_statuses. Records and zones still reach named at once (the
        # worker's NOTIFY and polling, WORKER_POLLING), and the worker's periodic recovery stays at 120 s.
        'heartbeat_emitter': {'heartbeat_interval': 60},
        'producer_task:delayed_notify': {'interval': 30},
        'keystone_authtoken': _authtoken_of(s, 'dns'),
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
        'oslo_concurrency': {'lock_path': ddir / 'lock'},
    }
    _write(p.conf('designate.conf'), _ini(common))
    for svc in ('designate-api', 'designate-central', 'designate-worker',
                'designate-producer', 'designate-mdns'):
        _write(p.conf(f'{svc}.conf'), _ini({'DEFAULT': {'log_file': p.log(svc)}}))
    _write(p.conf('pools.yaml'), dns_config.pool_yaml(p))


def _service_auth(s: dict, **extra) -> dict:
    """keystoneauth options of the service user, for a service calling another one (Nova -> Neutron, Placement)."""
    return {k: v for k, v in _authtoken(s).items() if k not in ('www_authenticate_uri', 'token_cache_time')} | extra


# Cell mappings are stored as templates filled from each service's own [database]/transport_url at run time, so the
# cached nova_api schema (with its two cells) holds no password and no port (lab/localcloud/startup.py).
CELL0_DB = '{scheme}://{username}:{password}@{hostname}:{port}/nova_cell0?{query}'
CELL1_DB = '{scheme}://{username}:{password}@{hostname}:{port}/nova?{query}'
CELL_TRANSPORT = '{scheme}://{username}:{password}@{hostname}:{port}/'
NOVA_SERVICES = ('nova-api', 'nova-conductor', 'nova-scheduler')


def nova_compute_name(az: str) -> str:
    return f'nova-compute-{az}'


def nova_compute_gate(p: Paths) -> Path:
    """The file whose existence lets lab/localcloud/nova_services.py fork the scheduler and the compute services."""
    return p.run / 'nova-compute.gate'


def placement(p: Paths, s: dict) -> None:
    _write(p.conf('placement.conf'), _ini({
        'DEFAULT': {'log_file': p.log('placement-api')},
        'placement_database': {'connection': db_url(s, 'placement')},
        'api': {'auth_strategy': 'keystone'},
        'keystone_authtoken': _authtoken_of(s, 'placement'),
        'oslo_policy': POLICY,
    }))


def glance(p: Paths, s: dict) -> None:
    gdir = p.lib / 'glance'
    for d in ('images', 'staging', 'tasks'):
        (gdir / d).mkdir(parents=True, exist_ok=True)
    _write(p.conf('glance-api.conf'), _ini({
        'DEFAULT': {
            'log_file': p.log('glance-api'),
            'bind_host': HOST, 'bind_port': PORTS['glance'],
            'workers': 0,  # serve from the parent process (eventlet): one process
            'enabled_backends': 'local:file',
            'public_endpoint': url('glance'),
            'transport_url': transport_url(s),
        },
        'database': {'connection': db_url(s, 'glance')},
        'glance_store': {'default_backend': 'local'},
        'local': {'filesystem_store_datadir': gdir / 'images'},
        'os_glance_staging_store': {'filesystem_store_datadir': gdir / 'staging'},
        'os_glance_tasks_store': {'filesystem_store_datadir': gdir / 'tasks'},
        'paste_deploy': {'flavor': 'keystone', 'config_file': '/etc/glance/glance-api-paste.ini'},
        'keystone_authtoken': _authtoken_of(s, 'image'),
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
        'oslo_concurrency': {'lock_path': gdir / 'lock'},
    }))


def nova(p: Paths, s: dict) -> None:
    """nova.conf for api, conductor, scheduler and the nova-compute services (fake virt driver, one host per AZ);
    the database URLs in nova-db.conf, which the compute services do not read (they reach the database through the
    conductor only, and log "No DB access allowed in nova-compute" errors when configured with one)."""
    ndir = p.lib / 'nova'
    (ndir / 'instances').mkdir(parents=True, exist_ok=True)
    _write(p.conf('nova.conf'), _ini({
        'DEFAULT': {
            'transport_url': transport_url(s),
            'state_path': ndir, 'instances_path': ndir / 'instances',
            'my_ip': HOST, 'host': 'localcloud',
            'enabled_apis': 'osapi_compute',
            'osapi_compute_listen': HOST, 'osapi_compute_listen_port': PORTS['nova'],
            'osapi_compute_workers': 1,
            'compute_driver': 'fake.FakeDriver',
            # The fake driver keeps its servers in memory: after a restart of nova-compute it knows none of them.
            # Without a power-state sync the database stays the truth (ACTIVE stays ACTIVE) across `down`/`up`.
            'sync_power_state_interval': -1,
            'resume_guests_state_on_host_boot': False,
            'graceful_shutdown_timeout': 2,
            # An idle cloud's Nova (five services reporting, three compute hosts' periodic tasks) was 40% of its idle
            # CPU, and make test runs three clouds on two cores. Each service reports every 30 s (not 10; the
            # scheduler counts a host up for 120 s after its report, Nova's 6:1 ratio kept near its 2.5 minimum's
            # margin); a compute host reports its fake driver's fixed resources to Placement at start and then every
            # 10 min (not every minute), tells the scheduler its servers every 10 min (not 2), and does not re-read
            # every server's ports from Neutron once a minute (its info cache comes from the boot; no test reads it).
            # 2026-12-05: every 60 s, a host up for 240 s after its report (the same 4:1 margin; Nova asks at
            # least 2.5:1), half the reports' RPC and database writes again.
            'report_interval': 60, 'service_down_time': 240,
            'update_resources_interval': 600, 'scheduler_instance_sync_interval': 600,
            'heal_instance_info_cache_interval': -1,
        },
        'api': {'auth_strategy': 'keystone'},
        'wsgi': {'api_paste_config': '/etc/nova/api-paste.ini'},
        'conductor': {'workers': 1},
        'scheduler': {'workers': 1},
        'keystone_authtoken': _authtoken_of(s, 'compute'),
        'placement': _service_auth(s),
        'neutron': _service_auth(s),
        'glance': {'region_name': REGION},
        'cinder': {'os_region_name': REGION},
        'service_user': {'send_service_user_token': False},
        # A test cloud: no instance, core or RAM quota (the default 10 instances were met once the seeded nodes, six
        # with the Kubernetes ones, sat beside the servers of tests running side by side)
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
        'vnc': {'enabled': False},
        'spice': {'enabled': False},
        'oslo_policy': POLICY,
        'oslo_messaging_notifications': {'driver': 'noop'},
        'oslo_concurrency': {'lock_path': ndir / 'lock'},
    }))
    _write(p.conf('nova-db.conf'), _ini({
        'api_database': {'connection': db_url(s, 'nova_api')},
        'database': {'connection': db_url(s, 'nova')},
    }))
    for svc in NOVA_SERVICES:
        _write(p.conf(f'{svc}.conf'), _ini({'DEFAULT': {'log_file': p.log(svc)}}))
    for az, host in COMPUTE_HOSTS.items():
        name = nova_compute_name(az)
        _write(p.conf(f'{name}.conf'), _ini({'DEFAULT': {'log_file': p.log(name), 'host': host}}))
    # The children of lab/localcloud/nova_services.py: each service with its own entry point and configuration files.
    # The compute services read no database URL (nova-db.conf): they reach the database through the conductor only.
    base, db = ['--config-file', str(p.conf('nova.conf'))], ['--config-file', str(p.conf('nova-db.conf'))]
    # The scheduler and the compute services wait for the gate (lab/localcloud/nova_services.py: Placement in the catalog,
    # the conductor listening).
    gated = ('nova-scheduler',)
    spec = [{'name': svc, 'module': f'nova.cmd.{svc.split("-")[1]}',
             'gate': str(nova_compute_gate(p)) if svc in gated else None,
             'argv': [*base, *db, '--config-file', str(p.conf(f'{svc}.conf'))]} for svc in NOVA_SERVICES]
    spec += [{'name': nova_compute_name(az), 'module': 'nova.cmd.compute', 'gate': str(nova_compute_gate(p)),
              'argv': [*base, '--config-file', str(p.conf(f'{nova_compute_name(az)}.conf'))]} for az in COMPUTE_HOSTS]
    _write(p.conf('nova-services.json'), json.dumps(spec, indent=1) + '\n')


def write_all(p: Paths, s: dict) -> None:
    from .dns import config as dns_config
    from .swift import config as swift_config
    p.makedirs()
    dataplane.remember(p)
    (p.root / 'port-offset').write_text(f'{PORT_OFFSET}\n')
    mariadb(p)
    rabbitmq(p, s)
    keystone(p, s)
    neutron(p, s)
    octavia(p, s)
    designate(p, s)
    dns_config.write(p)
    placement(p, s)
    glance(p, s)
    nova(p, s)
    swift_config.write(p, s)
