-- Revoke dashboard session ARGV[1] until ARGV[2] (when its cookie lapses anyway; a later
-- revocation is never shortened), and forget the revocations that lapsed by ARGV[3] (now):
-- the set never outgrows one session lifetime.
redis.call('ZREMRANGEBYSCORE', key('sessions'), '-inf', ARGV[3])
redis.call('ZADD', key('sessions'), 'GT', ARGV[2], ARGV[1])
return 1
