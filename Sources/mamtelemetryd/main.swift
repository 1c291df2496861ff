import Foundation
import TelemetryServer

/// The daemon's entry point; everything else lives in `TelemetryServer` so tests can run it.
let code = await Daemon.run()
exit(code)
