import { LuaScript } from './lua.js';

/**
 * The ownership ledger's scripts (ledger.ts): every write to the ledger is one of them, so each
 * checks what is there and writes in one step. Each takes many workspaces at once (group commit).
 */

/**
 * Writes intents, each unless its workspace has a record other than an intent of the same owner,
 * and journals them: one step per intent, so two writers can never both believe they wrote first.
 * Each written record gets the ledger's next sequence number as `intentSeq`. Many intents go in one
 * call (group commit: ledger.ts).
 * KEYS: owned hash, journal hash, sequence. ARGV: per intent, its field, the intent (JSON), its owner.
 * Returns per intent { 1, record before ('' for none), its intentSeq } or { 0, record there }.
 */
export const INTEND_OWNERSHIP = new LuaScript(`
local results = {}
for i = 1, #ARGV, 3 do
  local field, json, owner = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local existing = redis.call('HGET', KEYS[1], field)
  local blocked = false
  if existing then
    local ok, current = pcall(cjson.decode, existing)
    blocked = ok and type(current) == 'table' and (current.owner ~= owner or current.state ~= 'intent')
  end
  if blocked then
    results[#results + 1] = { 0, existing }
  else
    local record = cjson.decode(json)
    local seq = redis.call('INCR', KEYS[3])
    record.intentSeq = seq
    local text = cjson.encode(record)
    redis.call('HSET', KEYS[1], field, text)
    redis.call('HSET', KEYS[2], field, text)
    results[#results + 1] = { 1, existing or '', seq }
  end
end
return results
`);

/**
 * Confirms intents of their owners (the API accepted the pause, or a listing shows it) and
 * journals them; each confirmed record gets the ledger's next sequence number as `confirmSeq`.
 * KEYS: owned hash, journal hash, sequence.
 * ARGV: per confirmation, its field, owner, pausedAt, request id ('' for none), the intent id the
 * caller has ('' for none).
 * Returns per confirmation { its confirmSeq, the confirmed record } (the record '' when it was the
 * caller's intent: the caller makes it), or { 0, '' } when there was no intent of that owner.
 */
export const CONFIRM_OWNERSHIP = new LuaScript(`
local results = {}
for i = 1, #ARGV, 5 do
  local field, owner = ARGV[i], ARGV[i + 1]
  local existing = redis.call('HGET', KEYS[1], field)
  local result = { 0, '' }
  if existing then
    local ok, record = pcall(cjson.decode, existing)
    if ok and type(record) == 'table' and record.owner == owner and record.state == 'intent' then
      local known = ARGV[i + 4] ~= '' and record.intentId == ARGV[i + 4]
      record.state = 'confirmed'
      record.pausedAt = ARGV[i + 2]
      if ARGV[i + 3] ~= '' then record.requestId = ARGV[i + 3] end
      record.confirmSeq = redis.call('INCR', KEYS[3])
      local text = cjson.encode(record)
      redis.call('HSET', KEYS[1], field, text)
      redis.call('HSET', KEYS[2], field, text)
      result = { record.confirmSeq, known and '' or text }
    end
  end
  results[#results + 1] = result
end
return results
`);

/**
 * Ends records, each only if it is still the one the caller has (the same intent in the same
 * state, or, for a record without an intent id, the same text), books its paused interval (the
 * interval itself, for `savings`, and the running totals the savings counters read) and clears the
 * journal's entry as `journalEndsWith` (src/engine/ownership.ts) says: for any reason but
 * `refused`, and for `refused` only an entry that is the refused intent.
 * KEYS: owned hash, intervals set, totals hash, journal hash.
 * ARGV: per end, its field, intent id ('' for none), state, text as read (without an intent id),
 *       interval JSON ('' for none), its end score, hours, cost, cost field, retention cut-off
 *       score, reason.
 * Returns per end 1 when ended, 0 when the record is gone or changed meanwhile.
 */
export const END_OWNERSHIP = new LuaScript(`
local results = {}
for i = 1, #ARGV, 11 do
  local field, intentId = ARGV[i], ARGV[i + 1]
  local current = redis.call('HGET', KEYS[1], field)
  local same = false
  if current then
    if intentId ~= '' then
      local ok, record = pcall(cjson.decode, current)
      same = ok and type(record) == 'table' and record.intentId == intentId and record.state == ARGV[i + 2]
    else
      same = current == ARGV[i + 3]
    end
  end
  if same then
    redis.call('HDEL', KEYS[1], field)
    local entry = redis.call('HGET', KEYS[4], field)
    if entry then
      local clear = ARGV[i + 10] ~= 'refused'
      if not clear then
        local ok, journaled = pcall(cjson.decode, entry)
        clear = ok and type(journaled) == 'table' and journaled.state == 'intent' and intentId ~= '' and journaled.intentId == intentId
      end
      if clear then redis.call('HDEL', KEYS[4], field) end
    end
    if ARGV[i + 4] ~= '' then
      redis.call('ZADD', KEYS[2], ARGV[i + 5], ARGV[i + 4])
      redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[i + 9])
      redis.call('HINCRBYFLOAT', KEYS[3], 'hours', ARGV[i + 6])
      if ARGV[i + 8] ~= '' then redis.call('HINCRBYFLOAT', KEYS[3], ARGV[i + 8], ARGV[i + 7]) end
    end
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
`);
