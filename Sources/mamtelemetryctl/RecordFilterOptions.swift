import ArgumentParser

/// The filter vocabulary of `GET /v1/events` and `GET /v1/logs`, as CLI options.
struct RecordFilterOptions: ParsableArguments {
    @Option(help: "prod (default) or ppe.") var env: String?
    @Option(help: "App bundle id.") var app: String?
    @Option(help: "Device id.") var device: String?
    @Option(help: "User identity (UPN), case-insensitive.") var identity: String?
    @Option(help: "Session id.") var session: String?
    @OptionGroup var time: TimeRangeOptions
    @Option(help: "Case-insensitive text the record must contain.") var contains: String?
    @Option(help: "Records per page (1-10000).") var limit: Int?
    @Option(help: "asc or desc (default desc).") var order: String?
    @Option(help: "Continue from a previous page's cursor.") var cursor: String?

    var pairs: [(String, String?)] {
        [("env", env), ("app", app), ("device", device), ("identity", identity), ("session", session)]
            + time.pairs + [("contains", contains), ("limit", limit.map(String.init)), ("order", order), ("cursor", cursor)]
    }
}
