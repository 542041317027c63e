package lexicon

import "strings"

// kinds name a general word and everyday words for things of that kind:
// a question asks "What sports does Sam play?" and the note says "Sam
// plays tennis". They are for retrieval only: two members of a kind are
// not the same thing ("yoga" is not "running"), so consolidation never
// reads them. A kind's first field holds the words that ask for it, in
// every form a question writes them (singular, plural); its second the
// members, one word each (of a name of several words, the one that tells
// it apart: "zealand"). Members are general vocabulary and place names,
// never names of people or products, and a word is left out where its
// everyday sense is another ("bass" is a fish too, "fall" a season,
// "turkey" a food) or that is also a person's given name ("Jordan",
// "Austin", "Florence").
var kinds = []struct {
	asks, members string
}{
	{"sport sports", "football soccer basketball baseball softball volleyball tennis golf hockey rugby cricket badminton lacrosse " +
		"boxing wrestling swimming running cycling skiing snowboarding surfing skateboarding climbing rowing sailing kayaking " +
		"canoeing fencing archery gymnastics karate judo taekwondo kickboxing marathon triathlon bowling squash handball " +
		"diving jogging athletics pickleball skating rafting"},
	{"exercise exercises workout workouts fitness", "yoga pilates running jogging swimming cycling biking hiking walking " +
		"weightlifting lifting crossfit cardio aerobics zumba spinning rowing stretching boxing kickboxing dancing climbing " +
		"squats pushups treadmill gym calisthenics sprinting karate taekwondo judo"},
	{"martial", "karate judo taekwondo kickboxing boxing jujitsu aikido kung wrestling mma capoeira krav muay"},
	{"hobby hobbies pastime pastimes activity activities", "painting drawing sketching pottery knitting crocheting sewing " +
		"quilting gardening cooking baking reading writing photography dancing singing hiking camping fishing hunting " +
		"birdwatching gaming chess puzzles woodworking scrapbooking journaling calligraphy origami meditation yoga " +
		"traveling volunteering collecting blogging crafts guitar piano violin drums surfing skiing swimming running " +
		"cycling kayaking climbing skating bowling golf tennis"},
	{"outdoor outdoors", "hiking camping fishing kayaking canoeing climbing surfing skiing snowboarding cycling biking " +
		"gardening picnic birdwatching sailing swimming rafting trail trails beach mountains park"},
	{"instrument instruments", "piano guitar violin viola cello drums flute clarinet saxophone trumpet trombone harp " +
		"ukulele banjo keyboard harmonica accordion oboe mandolin"},
	{"pet pets", "dog dogs puppy cat cats kitten hamster rabbit bunny parrot bird fish goldfish turtle turtles tortoise " +
		"snake lizard gecko guinea horse pony ferret"},
	{"animal animals", "dog dogs puppy cat cats kitten hamster rabbit bunny parrot bird birds fish turtle turtles tortoise " +
		"snake lizard horse horses pony cow cows pig sheep goat chicken duck deer bear wolf fox lion tiger elephant " +
		"giraffe monkey dolphin whale shark owl eagle squirrel butterfly reptile reptiles"},
	{"country countries nation nations abroad", countries},
	{"city cities town towns", cities},
	{"state states", usStates},
	{"place places location locations destination destinations", countries + " " + cities + " " + usStates + " " + regions},
	{"continent continents region regions", regions},
	{"language languages", "english spanish french german chinese mandarin cantonese japanese korean italian portuguese " +
		"russian arabic hindi urdu bengali dutch swedish norwegian danish finnish polish greek turkish hebrew persian " +
		"vietnamese thai tagalog swahili latin"},
	{"food foods dish dishes meal meals cuisine recipe recipes", "pizza pasta spaghetti lasagna sushi ramen tacos burrito " +
		"burger burgers sandwich salad soup stew curry rice noodles steak chicken bread pancakes waffles omelette " +
		"dumplings pie cake cookies brownies cupcakes muffins dessert desserts"},
	{"dessert desserts treat treats sweets", "cake cakes cookies cookie brownies cupcakes muffins pie pies tart pudding " +
		"icecream chocolate candy pastry pastries donuts cheesecake"},
	{"drink drinks beverage beverages", "coffee tea juice soda wine beer smoothie lemonade cocktail cocktails whiskey " +
		"latte espresso milk"},
	{"job jobs career careers profession occupation", "teacher nurse doctor engineer lawyer accountant banker chef " +
		"cook writer author artist designer developer programmer manager counselor therapist scientist researcher " +
		"pilot driver mechanic electrician plumber carpenter architect pharmacist dentist veterinarian journalist " +
		"photographer musician actor actress firefighter officer soldier farmer librarian professor coach consultant"},
	{"relative relatives family", "mother father mom dad parents sister brother sibling siblings son daughter kids " +
		"children wife husband partner grandmother grandfather grandma grandpa aunt uncle cousin niece nephew"},
	{"vehicle vehicles", "car truck motorcycle van suv bus boat bike bicycle scooter"},
	{"genre genres", "rock jazz pop classical blues metal rap reggae folk opera punk techno funk soul gospel"},
	{"art arts artwork artworks craft crafts", "painting paintings drawing drawings sculpture sculptures pottery " +
		"photography ceramics sketch sketches mural murals watercolor watercolors collage knitting sewing"},
	{"holiday holidays celebration celebrations festival festivals", "christmas thanksgiving easter halloween " +
		"hanukkah diwali ramadan eid passover birthday anniversary"},
	{"color colors colour colours", "red blue green yellow purple pink orange black white gray grey brown beige " +
		"turquoise teal navy violet gold silver"},
	{"fruit fruits", "apple apples banana bananas orange oranges grape grapes strawberry strawberries blueberries " +
		"raspberries cherries mango mangoes pineapple peach peaches pear pears plum watermelon melon kiwi lemon lime " +
		"avocado coconut"},
	{"vegetable vegetables veggies", "carrot carrots broccoli spinach lettuce kale cabbage cauliflower potato " +
		"potatoes tomato tomatoes onion onions garlic pepper peppers cucumber zucchini peas beans corn celery " +
		"asparagus eggplant mushrooms pumpkin"},
	{"flower flowers", "tulip tulips daisy daisies lily lilies sunflower sunflowers orchid orchids lavender " +
		"peony peonies carnation dahlia marigold hydrangea poppy poppies"},
	{"music", "rock jazz pop classical blues metal rap reggae folk opera punk techno funk soul gospel piano " +
		"guitar violin drums"},
	{"game games boardgame boardgames", "chess checkers poker monopoly scrabble sudoku crossword crosswords " +
		"solitaire backgammon uno puzzles cards"},
	{"season seasons", "summer winter spring autumn"},
	{"clothes clothing outfit outfits", "dress dresses shirt shirts jeans jacket jackets coat sweater hoodie skirt " +
		"suit shoes sneakers boots hat scarf"},
	{"subject subjects course courses", "math mathematics science history english art biology chemistry physics " +
		"literature geography economics psychology philosophy music"},
}

// Place names for the kinds above: one word per name, the one that tells
// it apart.
const (
	countries = "afghanistan albania algeria argentina armenia australia austria azerbaijan bahamas bangladesh " +
		"belgium bolivia bosnia brazil bulgaria cambodia cameroon canada chile china colombia croatia cuba cyprus " +
		"czechia denmark ecuador egypt england estonia ethiopia fiji finland france georgia germany ghana greece " +
		"guatemala haiti honduras hungary iceland india indonesia iran iraq ireland israel italy jamaica japan " +
		"kazakhstan kenya korea kuwait laos latvia lebanon libya lithuania luxembourg madagascar malaysia " +
		"maldives malta mexico moldova monaco mongolia montenegro morocco mozambique myanmar nepal netherlands " +
		"holland zealand nicaragua nigeria norway pakistan panama paraguay peru philippines poland portugal " +
		"qatar romania russia rwanda scotland senegal serbia singapore slovakia slovenia somalia spain srilanka " +
		"sudan sweden switzerland syria taiwan tanzania thailand tunisia uganda ukraine uruguay usa " +
		"uzbekistan venezuela vietnam wales yemen zambia zimbabwe"
	cities = "london paris rome madrid barcelona lisbon berlin munich amsterdam brussels vienna prague budapest " +
		"warsaw athens istanbul moscow dublin edinburgh stockholm oslo copenhagen helsinki zurich geneva milan " +
		"venice naples tokyo kyoto osaka seoul beijing shanghai hongkong singapore bangkok delhi mumbai " +
		"dubai cairo nairobi johannesburg sydney melbourne auckland toronto vancouver montreal chicago boston " +
		"seattle portland denver dallas houston miami atlanta orlando nashville phoenix vegas " +
		"philadelphia detroit minneapolis pittsburgh baltimore sacramento honolulu anchorage brooklyn manhattan " +
		"hollywood nyc la sf"
	usStates = "alabama alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii " +
		"idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota " +
		"mississippi missouri montana nebraska nevada hampshire jersey mexico york carolina dakota ohio oklahoma " +
		"oregon pennsylvania rhode tennessee texas utah vermont virginia washington wisconsin wyoming"
	regions = "europe asia africa america americas australia antarctica caribbean scandinavia mediterranean " +
		"midwest northwest northeast southwest southeast pacific atlantic"
)

var members = map[string][]string{}

func init() {
	for _, k := range kinds {
		m := strings.Fields(k.members)
		for _, a := range strings.Fields(k.asks) {
			members[a] = append(members[a], m...)
		}
	}
}

// Members returns the words for things of the kind a lower-case word asks
// for ("sports": "tennis", "golf", …), nil when it names no kind. A word
// may be in the list more than once. The caller must not modify the
// slice.
func Members(word string) []string { return members[word] }
