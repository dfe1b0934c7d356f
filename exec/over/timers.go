package over

// Partitions become due in two ways: one with pending rows when the
// watermark reaches the first of them (Operator.timers), one with a RANGE
// frame when its frame expires (Operator.expiry).

// timer is an entry of Operator.timers: p is due at at.
type timer struct {
	at int64
	p  *partition
}

// expiring is an entry of Operator.expiry: p's frame expires at at,
// unless p got newer rows since.
type expiring struct {
	at int64
	p  *partition
}

// schedule makes p due when the watermark reaches at.
func (o *Operator) schedule(p *partition, at int64) {
	p.timer = at
	o.timers = append(o.timers, timer{at: at, p: p})
	h := o.timers
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2
		if h[i].at <= h[j].at {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// popTimer takes the first timer out of the heap.
func (o *Operator) popTimer() timer {
	h := o.timers
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = timer{}
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h[r].at < h[l].at {
			j = r
		}
		if h[i].at <= h[j].at {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	o.timers = h
	return top
}

// watchExpiry queues a partition with a RANGE frame to be checked for
// expiry.
func (o *Operator) watchExpiry(p *partition) {
	if o.cfg.Rows || !o.bounded || p.expiring || !p.emitted {
		return
	}
	p.expiring = true
	o.expiry = append(o.expiry, expiring{at: p.last + o.cfg.Preceding + 1, p: p})
}

// expire drops the partitions whose RANGE frames expired: any later row
// is after the watermark, so its frame starts after wm - Preceding, past
// every row kept once the newest is before that. (A job that ended keeps
// them for a run over a grown input, which may reach back.)
func (o *Operator) expire() {
	for o.expHead < len(o.expiry) && o.expiry[o.expHead].at <= o.wm {
		p := o.expiry[o.expHead].p
		o.expiry[o.expHead] = expiring{}
		o.expHead++
		p.expiring = false
		switch {
		case p.pending.len() > 0:
			// Watched again once they are emitted.
		case p.last+o.cfg.Preceding+1 > o.wm:
			o.watchExpiry(p)
		default:
			delete(o.parts, p.key)
			if o.store != nil {
				o.dirty = append(o.dirty, p.key)
			}
		}
	}
	if o.expHead > 0 && o.expHead*2 >= len(o.expiry) {
		n := copy(o.expiry, o.expiry[o.expHead:])
		clear(o.expiry[n:])
		o.expiry, o.expHead = o.expiry[:n], 0
	}
}
