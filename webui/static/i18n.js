// i18n.js: English and Simplified Chinese strings, and locale-aware number, unit and time formatting.

const dict = {
  en: {
    board: 'Board', bInfo: 'This board', bAddr: 'HTTP', bAdvertise: 'Reached at', bGossip: 'Gossip', bUptime: 'Uptime', bStoreProblem: 'The kept {s} store {p} is unreadable; this board serves and takes it from its peers.', bFix: 'Fix',
    bVersion: 'Version', bCommit: 'Commit', bGo: 'Go', bArch: 'Arch', bMemFree: 'Free memory', bMemProc: 'ews memory',
    bCA: 'Cluster CA', bCAHelp: 'Import it in the browser as a trusted authority once: every board of the cluster then opens without a warning. It can vouch for the cluster\'s boards only.',
    bPid: 'PID', bSha: 'Binary SHA-256', bDevices: 'Its devices', bLog: 'Log',
    logNeedsLogin: 'Log in to read this board\u2019s log.', logLoading: 'Loading the log…', logEmpty: 'No log lines yet.',
    logAdminOnly: 'Only an admin reads this board\u2019s log.', restart: 'Restart',
    restartConfirm: 'Restart {b}? It finishes the requests it runs, then starts again.', restarting: '{b} is restarting…',
    fwUpload: 'Firmware upgrade', fwFile: 'Binary', fwSum: 'SHA-256', fwConfirm: 'I checked this SHA-256',
    fwUploadBtn: 'Upload and restart', fwHashing: 'computing…',
    fwHelp: 'Pick a signed ews image for this board\u2019s arch (one file: ews firmware sign appends the signature). Compare its SHA-256 with the one you expect before you upload: the board checks it and the cluster\u2019s signature, swaps the binary and restarts; if the new one does not serve within 60 s, the old one comes back.',
    fwUploaded: 'Uploaded; the board restarts into it (was {v}).', fwRestarting: 'Restarting into the new firmware…',
    fwDone: 'The board runs the new firmware: {v}.', fwCommitted: 'Last upgrade: from {v}, committed.',
    fwRolledBack: 'Last upgrade rolled back to {v}: {r}',
    fwRolloutBtn: 'Upgrade every board', rolloutOrder: 'Order: {o}', rolloutFailed: 'Stopped: {e}',
    rolloutConfirm: 'Upgrade every board of the cluster to this binary, one at a time (this board last)?',
    devices: 'Devices', cluster: 'Cluster', login: 'Log in', logout: 'Log out',
    retryNow: 'Retry now', readOnly: 'Read-only: log in to control devices.',
    filter: 'Filter devices', devLoading: 'Loading devices…', noDevices: 'No devices yet: an admin adds them in Settings, or in the [[device]] tables of the boot config.', noDevicesGo: 'Open Settings',
    pressed: 'pressed', released: 'released', noMatch: 'No device matches the filter.',
    boards: 'Boards', queue: 'Master queue', rps: 'Completed requests/s', log: 'Event log',
    loginTitle: 'Log in to control devices', token: 'Token', userPass: 'User and password',
    user: 'User', password: 'Password', cancel: 'Cancel',
    disconnected: 'Disconnected from the board. Reconnecting in {s} s…',
    connecting: 'Disconnected from the board. Reconnecting…',
    nDevices: '{n} devices', nShown: '{shown} of {n} devices',
    on: 'on', off: 'off', error: 'error', pulse: 'Pulse', read: 'Read', set: 'Set',
    wiredTo: 'Board', anyBoard: 'any board (shared bus)', updated: 'Updated', never: 'never',
    rank: 'Rank', name: 'Name', role: 'Role', state: 'State', links: 'Links', load: 'Load', lastHeard: 'Last heard',
    master: 'master', follower: 'follower', epoch: 'epoch {e}', thisBoard: 'this board', simulated: 'simulated',
    restored: 'restored', restoredHint: 'brought back to its last commanded state after its board restarted',
    joining: 'joining', running: 'running', overloaded: 'overloaded', down: 'down', revoked: 'revoked',
    authMismatch: 'credentials differ',
    authMismatchHint: 'credentials differ from the master\u2019s: install the same cluster bundle',
    cpu: 'CPU', mem: 'Mem', disk: 'Disk', rt: 'RT',
    figUnknown: 'this board could not read this figure',
    limitAt: 'limit {v} (integrated policy): a board over it weighs 100',
    rtHelp: 'response time of the board\u2019s /healthz, measured by the master',
    rtNone: 'measured by the master only: open the master\u2019s page',
    clock: 'Clock', clockHelp: 'this board\u2019s clock against the clock of the board showing this page',
    clockWarn: 'this board\u2019s clock is more than a second off: the cluster keeps the master\u2019s time, but set the clock (README, Offline time)',
    clockNone: 'not measured yet',
    queueEmpty: 'The queue is empty.', noRate: 'No request counts from this board yet.',
    masterIs: 'Master {m} · epoch {e}', viewedFrom: 'seen from {s}',
    tableVersion: 'table version {v}: counts the changes of the replicated table',
    linksHelp: 'linknum / capacity: requests this board runs now / at most at once',
    boardsNote: 'Links: requests the board runs now / its capacity (linknum / capacity). Click a board\'s name to open its own page.',
    openBoard: 'open {b}\'s own page',
    noEvents: 'No events yet: master changes and boards going down or up show here.',
    boardDown: 'board {b} is down', noBoardFree: 'no board can take it', toTheme: 'switch to {s} mode', light: 'light', dark: 'dark',
    evTakeover: '{m} took over as master (epoch {e}, was {p})',
    evMaster: 'Master is now {m} (epoch {e})', evState: '{n} is {s}',
    evConnected: 'Connected', evDisconnected: 'Connection lost',
    loggedIn: 'Logged in.', loggedOut: 'Logged out.', loginFailed: 'Login failed: {e}',
    needLogin: 'Log in to control devices.',
    actionOk: '{d}: {a} done', actionFail: '{d}: {a} failed: {e}',
    a_turn_on: 'turn on', a_turn_off: 'turn off', a_toggle: 'toggle', a_set: 'set', a_pulse: 'pulse', a_read: 'read',
    emptyToken: 'Enter the token.', emptyUser: 'Enter user and password.',
    networkError: 'network error', close: 'Close', ms: 'ms', classes: 'class',
    users: 'Users', noRights: 'Your role may not control this device.', uCreate: 'Create user', uName: 'Name',
    uDevices: 'Devices (operator: patterns, comma-separated)', uRotate: 'Rotate token', uDelete: 'Delete',
    uTokenOnce: 'Token of {u} (shown once, keep it now):', uDeleteConfirm: 'Delete user {u}? Its token and sessions end on every board.',
    uAudit: 'Audit log', uRefresh: 'Refresh', uTime: 'Time', uAction: 'Action', uTarget: 'Target', uResult: 'Result',
    abTitle: 'Add a board', abHelp: 'A new board joins with a one-time enrolment code. The code is made where the admin bundle is kept, by the command below: the admin bundle (the CA\u2019s key) never goes to a browser or a board.',
    abName: 'Board name', abAddrs: 'Its addresses (optional)', abMinutes: 'Valid for (minutes)', abShow: 'Show the command',
    abRun: 'On your computer, where admin.bundle is, run:', abPending: 'Waiting for their boards', abNone: 'No enrolment is waiting.',
    abThen: 'It prints a one-time code. Boot {b} with no boot config, open its first-run page and choose \u201cJoin with an enrolment code\u201d: its claim code, the code and {u}. The code works once, for {m} minutes; it then shows below until {b} fetches it.',
    abExpires: 'Expires', abBadName: 'A board name is 1 to 63 of a-z, 0-9 and -.',
    sInEffect: 'Not in the configuration: the defaults shown greyed below are in effect. Type to change them.',
    settings: 'Settings', sDevices: 'Devices of the cluster', sAdd: 'Add device', sDriver: 'Driver', sSave: 'Save', sEdit: 'Edit',
    sBoards: 'On each board', sSections: 'Rules, scheduler, MQTT, history', sHistory: 'Versions', sVersion: 'Version {v}',
    sRemoveConfirm: 'Remove {d} from every board? Its board closes it (on_stop).', sSaved: 'Version {v} saved; every board applies it.',
    sSavedRestart: 'Version {v} saved; the boards take {r} at their next start.', sLine: 'line {n}', sDiff: 'Diff',
    sRollback: 'Roll back to this', sRollbackConfirm: 'Make a new version with version {v}\u2019s content?', sVer: 'Version',
    sNote: 'Note', sApplied: 'Applied', sRestart: 'Restart needed', sOk: 'applied',
    sSec_rule: 'Rules', sSec_sched: 'Scheduler', sSec_mqtt: 'MQTT', sSec_history: 'History',
    sHelp_rule: '[[rule]] tables: when = "button1 pressed" or at = "07:30", then = "relay1 toggle".',
    sHelp_sched: '[sched]: policy, weights and limits ([sched.integrated]), [[sched.class]] and [[sched.proximity]] (cidr, prefer).',
    sHelp_mqtt: '[mqtt]: broker, user, password_file, prefix, discovery.', sHelp_history: '[history]: full, keep, flush (taken at the boards\u2019 next start).',
    uClient: 'Client', viewer: 'viewer', operator: 'operator', admin: 'admin', uWho: 'Logged in as {u} ({r})',
    history: 'History', csv: 'CSV', histPoints: '{n} points', noHistory: 'No history yet.',
    histFull: 'Card full: history stopped growing', histMemory: 'in memory only (no state_dir)',
  },
  zh: {
    board: '本板', bInfo: '本开发板', bAddr: 'HTTP', bAdvertise: '对外地址', bGossip: 'Gossip', bUptime: '运行时间', bStoreProblem: '保存的 {s} 存储 {p} 无法读取；本板继续服务并从其他板获取。', bFix: '修复',
    bVersion: '版本', bCommit: '提交', bGo: 'Go', bArch: '架构', bMemFree: '可用内存', bMemProc: 'ews 内存',
    bCA: '集群 CA', bCAHelp: '在浏览器中将其导入为受信任的证书颁发机构一次：之后集群的每块板都不再警告。它只能为集群的板作证。',
    bPid: '进程号', bSha: '程序 SHA-256', bDevices: '它的设备', bLog: '日志',
    logNeedsLogin: '登录后才能查看本开发板的日志。', logLoading: '正在加载日志…', logEmpty: '还没有日志。',
    logAdminOnly: '只有管理员可以查看本开发板的日志。', restart: '重启',
    restartConfirm: '重启 {b}？它会先完成正在处理的请求，然后重新启动。', restarting: '{b} 正在重启…',
    fwUpload: '固件升级', fwFile: '程序文件', fwSum: 'SHA-256', fwConfirm: '我已核对此 SHA-256',
    fwUploadBtn: '上传并重启', fwHashing: '计算中…',
    fwHelp: '选择适用于本开发板架构、已签名的 ews 程序（单个文件：ews firmware sign 会把签名附在文件末尾）。上传前请核对它的 SHA-256：开发板会校验哈希和集群签名、替换程序并重启；若新程序 60 秒内未能提供服务，将恢复旧程序。',
    fwUploaded: '已上传，开发板正在以新固件重启（原版本 {v}）。', fwRestarting: '正在以新固件重启…',
    fwDone: '开发板已运行新固件：{v}。', fwCommitted: '上次升级：自 {v} 升级，已确认。',
    fwRolledBack: '上次升级已回滚到 {v}：{r}',
    fwRolloutBtn: '升级所有开发板', rolloutOrder: '顺序：{o}', rolloutFailed: '已停止：{e}',
    rolloutConfirm: '将集群中的每块开发板逐一升级到此程序（本板最后）？',
    devices: '设备', cluster: '集群', login: '登录', logout: '退出',
    retryNow: '立即重试', readOnly: '只读：登录后才能控制设备。',
    filter: '筛选设备', devLoading: '正在加载设备…', noDevices: '还没有设备：管理员可在“设置”中添加，或写入启动配置的 [[device]] 表。', noDevicesGo: '打开设置',
    pressed: '按下', released: '松开', noMatch: '没有符合筛选条件的设备。',
    boards: '开发板', queue: '主节点队列', rps: '每秒完成请求数', log: '事件日志',
    loginTitle: '登录以控制设备', token: '令牌', userPass: '用户名和密码',
    user: '用户名', password: '密码', cancel: '取消',
    disconnected: '与开发板的连接已断开，{s} 秒后重新连接…',
    connecting: '与开发板的连接已断开，正在重新连接…',
    nDevices: '{n} 个设备', nShown: '显示 {shown} / {n} 个设备',
    on: '开', off: '关', error: '错误', pulse: '脉冲', read: '读取', set: '设置',
    wiredTo: '开发板', anyBoard: '任意开发板（共享总线）', updated: '更新于', never: '从未',
    rank: '序号', name: '名称', role: '角色', state: '状态', links: '连接数', load: '负载', lastHeard: '最后通信',
    master: '主节点', follower: '从节点', epoch: '任期 {e}', thisBoard: '本机', simulated: '模拟',
    restored: '已恢复', restoredHint: '开发板重启后已恢复到最后一次命令的状态',
    joining: '加入中', running: '运行中', overloaded: '过载', down: '离线', revoked: '已吊销',
    authMismatch: '凭据不一致',
    authMismatchHint: '与主节点的凭据不一致：请安装同一个集群凭据包',
    cpu: 'CPU', mem: '内存', disk: '磁盘', rt: '响应',
    figUnknown: '该开发板无法读取此项数据',
    limitAt: '限值 {v}（综合负载策略）：超过限值的开发板权值为 100',
    rtHelp: '主节点测得的该开发板 /healthz 响应时间',
    rtNone: '仅由主节点测量：请打开主节点的页面',
    clock: '时钟', clockHelp: '该开发板的时钟与显示本页的开发板时钟之差',
    clockWarn: '该开发板的时钟偏差超过一秒：集群沿用主节点的时间，但请校准时钟（README，离线时间）',
    clockNone: '尚未测量',
    queueEmpty: '队列为空。', noRate: '该开发板尚未提供请求计数。',
    masterIs: '主节点 {m} · 任期 {e}', viewedFrom: '来自 {s} 的视图',
    tableVersion: '表版本 {v}：复制表的变更次数',
    linksHelp: '连接数 / 容量：该开发板正在处理的请求数 / 最多同时处理数',
    boardsNote: '连接数：开发板正在处理的请求数 / 容量（linknum / capacity）。点击开发板名称可打开它自己的页面。',
    openBoard: '打开 {b} 自己的页面',
    noEvents: '暂无事件：主节点变更和开发板上下线会显示在这里。',
    boardDown: '开发板 {b} 已离线', noBoardFree: '没有可用的开发板', toTheme: '切换到{s}模式', light: '浅色', dark: '深色',
    evTakeover: '{m} 接管为主节点（任期 {e}，原为 {p}）',
    evMaster: '主节点现为 {m}（任期 {e}）', evState: '{n} 状态：{s}',
    evConnected: '已连接', evDisconnected: '连接中断',
    loggedIn: '已登录。', loggedOut: '已退出。', loginFailed: '登录失败：{e}',
    needLogin: '请先登录再控制设备。',
    users: '用户', noRights: '你的角色无权控制此设备。', uCreate: '创建用户', uName: '名称',
    uDevices: '设备（操作员：匹配模式，逗号分隔）', uRotate: '更换令牌', uDelete: '删除',
    uTokenOnce: '{u} 的令牌（只显示一次，请立即保存）：', uDeleteConfirm: '删除用户 {u}？其令牌和会话将在所有开发板上失效。',
    uAudit: '审计日志', uRefresh: '刷新', uTime: '时间', uAction: '操作', uTarget: '对象', uResult: '结果',
    abTitle: '添加开发板', abHelp: '新开发板用一次性注册码加入。注册码由下面的命令在保存管理员包的电脑上生成：管理员包（CA 的私钥）从不进入浏览器或开发板。',
    abName: '开发板名称', abAddrs: '它的地址（可选）', abMinutes: '有效时间（分钟）', abShow: '显示命令',
    abRun: '在保存 admin.bundle 的电脑上运行：', abPending: '等待开发板领取', abNone: '没有等待中的注册。',
    abThen: '命令会打印一个一次性注册码。让 {b} 在没有启动配置的情况下启动，打开它的首次运行页面，选择“用注册码加入”：输入它的认领码、注册码和 {u}。注册码只能用一次，有效 {m} 分钟；在 {b} 领取之前它显示在下方。',
    abExpires: '过期时间', abBadName: '开发板名称为 1 到 63 个 a-z、0-9 和 - 字符。',
    sInEffect: '配置中没有此节：下方灰色显示的默认值正在生效。输入即可修改。',
    settings: '设置', sDevices: '集群的设备', sAdd: '添加设备', sDriver: '驱动', sSave: '保存', sEdit: '编辑',
    sBoards: '各板状态', sSections: '规则、调度、MQTT、历史', sHistory: '版本', sVersion: '版本 {v}',
    sRemoveConfirm: '从所有板移除 {d}？其所在板会关闭它（on_stop）。', sSaved: '版本 {v} 已保存；各板正在应用。',
    sSavedRestart: '版本 {v} 已保存；{r} 在各板下次启动时生效。', sLine: '第 {n} 行', sDiff: '差异',
    sRollback: '回滚到此版本', sRollbackConfirm: '以版本 {v} 的内容创建新版本？', sVer: '版本',
    sNote: '备注', sApplied: '应用', sRestart: '需要重启', sOk: '已应用',
    sSec_rule: '规则', sSec_sched: '调度', sSec_mqtt: 'MQTT', sSec_history: '历史',
    sHelp_rule: '[[rule]] 表：when = "button1 pressed" 或 at = "07:30"，then = "relay1 toggle"。',
    sHelp_sched: '[sched]：policy、权重与限值（[sched.integrated]）、[[sched.class]] 与 [[sched.proximity]]（cidr、prefer）。',
    sHelp_mqtt: '[mqtt]：broker、user、password_file、prefix、discovery。', sHelp_history: '[history]：full、keep、flush（各板下次启动时生效）。',
    uClient: '客户端', viewer: '查看者', operator: '操作员', admin: '管理员', uWho: '当前用户 {u}（{r}）',
    actionOk: '{d}：{a} 完成', actionFail: '{d}：{a} 失败：{e}',
    a_turn_on: '打开', a_turn_off: '关闭', a_toggle: '切换', a_set: '设置', a_pulse: '脉冲', a_read: '读取',
    emptyToken: '请输入令牌。', emptyUser: '请输入用户名和密码。',
    networkError: '网络错误', close: '关闭', ms: '毫秒', classes: '类别',
    history: '历史', csv: 'CSV', histPoints: '{n} 个数据点', noHistory: '暂无历史数据。',
    histFull: '存储卡已满：历史停止增长', histMemory: '仅在内存中（未设置 state_dir）',
  },
};

const KEY = 'ews.lang';
let lang = pick();

function pick() {
  let saved = null;
  try { saved = localStorage.getItem(KEY); } catch { /* storage may be blocked */ }
  if (saved === 'en' || saved === 'zh') return saved;
  const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en'];
  for (const l of langs) {
    const s = String(l).toLowerCase();
    if (s.startsWith('zh')) return 'zh';
    if (s.startsWith('en')) return 'en';
  }
  return 'en';
}

// current returns 'en' or 'zh'.
export function current() { return lang; }

// locale returns the BCP 47 tag used for Intl formatting.
export function locale() { return lang === 'zh' ? 'zh-CN' : 'en'; }

// setLang switches the language and remembers the choice.
export function setLang(l) {
  lang = l === 'zh' ? 'zh' : 'en';
  try { localStorage.setItem(KEY, lang); } catch { /* ignore */ }
  fmtCache.clear();
}

// t translates key and fills {placeholders} from vars.
export function t(key, vars) {
  let s = dict[lang][key] ?? dict.en[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  return s;
}

// applyStatic translates the elements of the page that carry data-i18n / data-i18n-ph.
export function applyStatic(root = document) {
  document.documentElement.lang = locale();
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-ph]')) el.placeholder = t(el.dataset.i18nPh);
}

const fmtCache = new Map();
function nf(opts) {
  const k = JSON.stringify(opts);
  let f = fmtCache.get(k);
  if (!f) {
    try { f = new Intl.NumberFormat(locale(), opts); } catch { f = new Intl.NumberFormat(locale()); }
    fmtCache.set(k, f);
  }
  return f;
}

// Units Intl can format itself, keyed by the unit strings devices report.
const intlUnits = {
  '°C': 'celsius', 'C': 'celsius', 'celsius': 'celsius', '°F': 'fahrenheit', 'F': 'fahrenheit',
  '%': 'percent', 'percent': 'percent', 'ms': 'millisecond', 's': 'second',
  'm': 'meter', 'cm': 'centimeter', 'mm': 'millimeter', 'km': 'kilometer',
  'l': 'liter', 'L': 'liter', 'ml': 'milliliter', 'g': 'gram', 'kg': 'kilogram',
  'B': 'byte', 'kB': 'kilobyte', 'MB': 'megabyte', '°': 'degree',
};

function digits(v) {
  const a = Math.abs(v);
  return a >= 1000 ? 0 : a >= 100 ? 1 : 2;
}

// num formats a number for the locale.
export function num(v, maxDigits) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return String(v ?? '');
  return nf({ maximumFractionDigits: maxDigits ?? digits(v) }).format(v);
}

// withUnit formats a value with its unit for the locale; non-numbers are shown as text.
export function withUnit(v, unit) {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    return unit ? `${String(v ?? '')} ${unit}` : String(v ?? '');
  }
  const u = intlUnits[unit];
  if (u) return nf({ style: 'unit', unit: u, maximumFractionDigits: digits(v) }).format(v);
  return unit ? `${num(v)} ${unit}` : num(v);
}

// pct formats a fraction 0..1 as a percentage.
export function pct(f) {
  if (typeof f !== 'number' || !Number.isFinite(f)) return '–';
  return nf({ style: 'percent', maximumFractionDigits: 0 }).format(f);
}

// ago formats an age in milliseconds ("3 seconds ago").
export function ago(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return t('never');
  const rtf = new Intl.RelativeTimeFormat(locale(), { numeric: 'auto', style: 'short' });
  const s = ms / 1000;
  if (s < 1) return nf({ style: 'unit', unit: 'millisecond', unitDisplay: 'narrow', maximumFractionDigits: 0 }).format(Math.max(0, ms));
  if (s < 60) return rtf.format(-Math.round(s), 'second');
  if (s < 3600) return rtf.format(-Math.round(s / 60), 'minute');
  if (s < 86400) return rtf.format(-Math.round(s / 3600), 'hour');
  return rtf.format(-Math.round(s / 86400), 'day');
}

// clock formats a Date as a local time of day.
export function clock(d) {
  return new Intl.DateTimeFormat(locale(), { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(d);
}
