import ArgumentParser

/// The filter vocabulary of `GET /v1/events` and `GET /v1/logs`, as CLI options.
struct RecordFilterOptions: ParsableArguments {
    @Option(help: "prod (default) or ppe.") var env: String?
    @Option(help: "App bundle id.") var app: String?
    @Option(help: "Device id: any case, or its first characters when they name one device.") var device: String?
    @Option(help: "User: a user-… pseudonym, or with a pii token a UPN (any case); either adds its devices' logs in the window.")
    var identity: String?
    @Flag(help: "With --identity: only the records that name the identity, not its devices' other records.")
    var noDevices = false
    @Option(help: "Session id.") var session: String?
    @OptionGroup var time: TimeRangeOptions
    @Option(parsing: .unconditional, help: "A moment (RFC 3339, epoch ms or relative): the records within --span of it.")
    var around: String?
    @Option(help: "Half-width of the --around window (default 2m).") var span: String?
    @Option(help: "Case-insensitive text the record must contain.") var contains: String?
    @Option(help: "Records per page (1-10000).") var limit: Int?
    @Option(help: "asc or desc (default desc).") var order: String?
    @Option(help: "Continue from a previous page's cursor.") var cursor: String?

    func validate() throws {
        if around != nil, time.since != nil || time.until != nil {
            throw ValidationError("--around is a window of its own: leave out --since and --until")
        }
        if span != nil, around == nil { throw ValidationError("--span widens --around: give --around too") }
    }

    var pairs: [(String, String?)] {
        [
            ("env", env), ("app", app), ("device", device), ("identity", identity), ("expand", noDevices ? "none" : nil),
            ("session", session),
        ]
            + time.pairs + [("around", around), ("span", span)]
            + [("contains", contains), ("limit", limit.map(String.init)), ("order", order), ("cursor", cursor)]
    }
}
