-- Drives wrk (bench/load.py) from a plan file named by WRK_PLAN: plans separated by a line
-- "--", each a cycle of requests "METHOD<TAB>PATH<TAB>AUTHORIZATION<TAB>BODY" (empty fields
-- allowed). Run with as many threads as connections: thread i owns plan i % #plans, so a
-- link/unlink cycle never shares its (download, asset) pair with another connection.
-- Each connection comes from its own client address (X-Forwarded-For 10.0.0.<i>, believed
-- with LMS_NUM_PROXIES=1), as many clients would: the invite throttle counts per address.
-- Prints one JSON line of figures at the end.

local counter = 0
local threads = {}

function setup(thread)
  thread:set("index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local function read_plans(path, address)
  local plans, current = {}, {}
  for line in io.lines(path) do
    if line == "--" then
      table.insert(plans, current)
      current = {}
    elseif line ~= "" then
      local method, target, auth, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      local headers = { ["Accept"] = "application/json", ["X-Forwarded-For"] = address }
      if auth ~= "" then headers["Authorization"] = "Bearer " .. auth end
      if body == "" then
        body = nil
      else
        headers["Content-Type"] = "application/json"
      end
      table.insert(current, wrk.format(method, target, headers, body))
    end
  end
  if #current > 0 then table.insert(plans, current) end
  return plans
end

local requests, position

function init(args)
  local plans = read_plans(os.getenv("WRK_PLAN"), "10.0.0." .. (index % 250 + 1))
  requests = plans[(index % #plans) + 1]
  position = 1
  if #requests > 1 then
    -- A cycle moves on when its request is answered, not when wrk asks for one: wrk calls
    -- request() once more on its first thread, to check the script, before anything is
    -- sent. Counted there, that thread's cycle began at its second request (an unlink
    -- before its link: a 404 whenever the pair was unlinked).
    response = function()
      position = position % #requests + 1
    end
  end
end

function request()
  return requests[position]
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
